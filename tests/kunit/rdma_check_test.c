// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the stateless checks of one-sided operations: descriptors from
 * userspace and a request's rights and range against a registration.
 */
#include <kunit/test.h>

#include "rdma_check.h"

#define RW	(USNIC_REL_ACCESS_REMOTE_READ | USNIC_REL_ACCESS_REMOTE_WRITE)

struct range_case {
	u32 mr_access;
	u64 mr_len;
	u32 need;
	u64 off;
	u64 len;
	u16 status;
};

static const struct range_case range_cases[] = {
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_WRITE, 0, 4096, USNIC_REL_ST_OK },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, 4095, 1, USNIC_REL_ST_OK },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, 4096, 0, USNIC_REL_ST_OK },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, 4095, 2, USNIC_REL_ST_OUT_OF_BOUNDS },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, 4097, 0, USNIC_REL_ST_OUT_OF_BOUNDS },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, 0, 4097, USNIC_REL_ST_OUT_OF_BOUNDS },
	/* Sums that would wrap must not pass. */
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, U64_MAX, 2, USNIC_REL_ST_OUT_OF_BOUNDS },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_READ, 8, U64_MAX - 4, USNIC_REL_ST_OUT_OF_BOUNDS },
	{ RW, U64_MAX, USNIC_REL_ACCESS_REMOTE_READ, U64_MAX - 1, 1, USNIC_REL_ST_OK },
	/* Rights are checked before the range. */
	{ USNIC_REL_ACCESS_REMOTE_READ, 4096, USNIC_REL_ACCESS_REMOTE_WRITE, 0, 8,
	  USNIC_REL_ST_ACCESS },
	{ RW, 4096, USNIC_REL_ACCESS_REMOTE_ATOMIC, 0, 8, USNIC_REL_ST_ACCESS },
	{ USNIC_REL_ACCESS_LOCAL_WRITE, 4096, USNIC_REL_ACCESS_REMOTE_WRITE, 0, 8,
	  USNIC_REL_ST_ACCESS },
	{ 0, 4096, USNIC_REL_ACCESS_REMOTE_READ, 1 << 20, 8, USNIC_REL_ST_ACCESS },
	{ USNIC_REL_ACCESS_ALL, 8, USNIC_REL_ACCESS_REMOTE_ATOMIC, 0, 8, USNIC_REL_ST_OK },
};

static void rdma_range_table(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(range_cases); i++) {
		const struct range_case *c = &range_cases[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    usnic_rel_rdma_range_status(c->mr_access, c->mr_len,
								c->need, c->off, c->len),
				    c->status, "case %u", i);
	}
}

static struct usnic_rel_sqe rdma_sqe(u8 opcode, u32 len)
{
	struct usnic_rel_sqe sqe = {
		.opcode = opcode,
		.len = len,
		.rkey = 0x123456789abcdef0ULL,
		.remote_off = 64,
	};

	return sqe;
}

static void rdma_sqe_put_get(struct kunit *test)
{
	struct usnic_rel_sqe sqe = rdma_sqe(USNIC_REL_OP_PUT, 100);

	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), 0);
	sqe.staging_off = 3996;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), 0);
	sqe.staging_off = 3997;		/* one byte past the staging area */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe.staging_off = U32_MAX;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);

	sqe = rdma_sqe(USNIC_REL_OP_PUT, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe = rdma_sqe(USNIC_REL_OP_PUT, 64);
	sqe.flags = USNIC_REL_SQE_INLINE;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), 0);
	sqe.len = 65;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe.len = 8;
	sqe.staging_off = 8;		/* inline takes no staging */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe.staging_off = 0;
	sqe.flags = 0x80;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	/* A quiet put, inline or staged. */
	sqe.flags = USNIC_REL_SQE_INLINE | USNIC_REL_SQE_QUIET;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), 0);
	sqe = rdma_sqe(USNIC_REL_OP_PUT, 100);
	sqe.flags = USNIC_REL_SQE_QUIET;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), 0);

	sqe = rdma_sqe(USNIC_REL_OP_PUT, 16);
	sqe.remote_off = U64_MAX - 8;	/* wraps */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe = rdma_sqe(USNIC_REL_OP_PUT, 16);
	sqe.reserved0 = 1;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe = rdma_sqe(USNIC_REL_OP_PUT, 16);
	sqe.reserved2[1] = 1;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);

	sqe = rdma_sqe(USNIC_REL_OP_GET, 4096);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), 0);
	sqe.flags = USNIC_REL_SQE_INLINE;	/* a get has no inline payload */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe.flags = USNIC_REL_SQE_QUIET;	/* only a put is answered later */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe = rdma_sqe(USNIC_REL_OP_GET, 4097);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);

	sqe = rdma_sqe(USNIC_REL_OP_SEND, 16);	/* not one-sided */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
	sqe = rdma_sqe(0x7f, 16);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 4096), -EINVAL);
}

static struct usnic_rel_sqe rdma_atomic(u32 op, u32 size, u64 add_or_cmp, u64 store)
{
	struct usnic_rel_sqe sqe = rdma_sqe(USNIC_REL_OP_ATOMIC, size);

	sqe.atomic.atomic_op = op;
	sqe.atomic.atomic_size = size;
	sqe.atomic.operand[0] = add_or_cmp;
	sqe.atomic.operand[1] = store;
	return sqe;
}

static void rdma_sqe_atomic(struct kunit *test)
{
	struct usnic_rel_sqe sqe;

	sqe = rdma_atomic(USNIC_REL_ATOMIC_FADD, 8, 5, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), 0);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_FADD, 8, 5, 1);	/* stray store value */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_SWAP, 4, 0, U32_MAX);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), 0);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_SWAP, 4, 1, 2);	/* stray compare */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_CAS, 4, 1, (u64)U32_MAX + 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_CAS, 8, U64_MAX, U64_MAX);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), 0);
	sqe = rdma_atomic(0, 8, 1, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_SWAP + 1, 8, 0, 1);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_FADD, 2, 1, 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_FADD, 8, 1, 0);
	sqe.len = 4;				/* len must equal the size */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_FADD, 8, 1, 0);
	sqe.remote_off = 4;			/* misaligned */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
	sqe = rdma_atomic(USNIC_REL_ATOMIC_FADD, 4, 1, 0);
	sqe.remote_off = 4;
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), 0);
	sqe.staging_off = 4;			/* an atomic uses no staging */
	KUNIT_EXPECT_EQ(test, usnic_rel_rdma_sqe_valid(&sqe, 0), -EINVAL);
}

static struct kunit_case rdma_check_cases[] = {
	KUNIT_CASE(rdma_range_table),
	KUNIT_CASE(rdma_sqe_put_get),
	KUNIT_CASE(rdma_sqe_atomic),
	{}
};

static struct kunit_suite rdma_check_suite = {
	.name = "usnic_rel_rdma_check",
	.test_cases = rdma_check_cases,
};

kunit_test_suite(rdma_check_suite);
