// SPDX-License-Identifier: MIT
/*
 * urel provider: atomics, each element one remote atomic of the module
 * (fetch-add, swap, compare-and-swap on 4 or 8 bytes, done by the target's
 * kernel). Offered, and reported by the query calls, is what maps on those:
 *   fi_atomic        FI_SUM (fetch-add), FI_ATOMIC_WRITE (swap)
 *   fi_fetch_atomic  FI_SUM, FI_ATOMIC_WRITE, FI_ATOMIC_READ (fetch-add of 0)
 *   fi_compare_atomic FI_CSWAP
 * on FI_INT32, FI_UINT32, FI_INT64 and FI_UINT64 (two's complement: one add
 * serves signed and unsigned). Nothing is computed here: every other
 * operation or type is refused with -FI_EOPNOTSUPP. Completions carry
 * FI_ATOMIC and FI_WRITE, or FI_READ for the fetching forms.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

/* The three kinds of call, as the query flags name them (0: fi_atomic). */
#define UREL_FI_KINDS (FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC)

static unsigned int urel_fi_atomic_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT32:
	case FI_UINT32:
		return 4;
	case FI_INT64:
	case FI_UINT64:
		return 8;
	default:
		return 0;
	}
}

static int urel_fi_atomic_map(uint64_t kind, enum fi_op op, enum urel_atomic_op *aop,
			      bool *no_operand)
{
	*no_operand = false;
	switch (kind) {
	case 0:
	case FI_FETCH_ATOMIC:
		if (op == FI_SUM) {
			*aop = UREL_ATOMIC_FETCH_ADD;
			return 0;
		}
		if (op == FI_ATOMIC_WRITE) {
			*aop = UREL_ATOMIC_SWAP;
			return 0;
		}
		if (op == FI_ATOMIC_READ && kind == FI_FETCH_ATOMIC) {
			*aop = UREL_ATOMIC_FETCH_ADD;
			*no_operand = true;
			return 0;
		}
		return -FI_EOPNOTSUPP;
	case FI_COMPARE_ATOMIC:
		if (op == FI_CSWAP) {
			*aop = UREL_ATOMIC_CAS;
			return 0;
		}
		return -FI_EOPNOTSUPP;
	default:
		return -FI_EINVAL;
	}
}

int urel_fi_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
			 struct fi_atomic_attr *attr, uint64_t flags)
{
	unsigned int size = urel_fi_atomic_size(datatype);
	enum urel_atomic_op aop;
	bool no_operand;
	int ret;

	(void)domain;
	if (flags & ~UREL_FI_KINDS)
		return -FI_EBADFLAGS;
	ret = urel_fi_atomic_map(flags & UREL_FI_KINDS, op, &aop, &no_operand);
	if (ret)
		return ret;
	if (!size)
		return -FI_EOPNOTSUPP;
	if (attr) {
		attr->size = size;
		attr->count = UREL_FI_ATOMIC_COUNT;
	}
	return 0;
}

static int urel_fi_atomic_valid(struct fid_ep *fid, uint64_t kind, enum fi_datatype datatype,
				enum fi_op op, size_t *count)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid);
	struct fi_atomic_attr attr;
	int ret;

	if (!(ep->caps & FI_ATOMIC))
		return -FI_EOPNOTSUPP;
	ret = urel_fi_query_atomic(&ep->dom->fid, datatype, op, &attr, kind);
	if (!ret && count)
		*count = attr.count;
	return ret;
}

static int urel_fi_writevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
			      size_t *count)
{
	return urel_fi_atomic_valid(ep, 0, datatype, op, count);
}

static int urel_fi_readwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
				  size_t *count)
{
	return urel_fi_atomic_valid(ep, FI_FETCH_ATOMIC, datatype, op, count);
}

static int urel_fi_compwritevalid(struct fid_ep *ep, enum fi_datatype datatype, enum fi_op op,
				  size_t *count)
{
	return urel_fi_atomic_valid(ep, FI_COMPARE_ATOMIC, datatype, op, count);
}

/* One atomic call: @count elements at @addr in the registration @key of @dest. */
struct urel_fi_atomic_args {
	uint64_t kind;
	const void *buf;
	size_t count;
	const void *compare;
	void *result;
	fi_addr_t dest;
	uint64_t addr, key;
	enum fi_datatype datatype;
	enum fi_op op;
	void *context;
	uint64_t flags;
};

static ssize_t urel_fi_atomic_do(struct fid_ep *fid, const struct urel_fi_atomic_args *a)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid);
	unsigned int size = urel_fi_atomic_size(a->datatype);
	struct urel_fi_rma *op;
	enum urel_atomic_op aop;
	bool no_operand;
	size_t bytes;
	int ret;

	if (!(ep->caps & FI_ATOMIC))
		return -FI_EOPNOTSUPP;
	ret = urel_fi_atomic_map(a->kind, a->op, &aop, &no_operand);
	if (ret)
		return ret;
	if (!size)
		return -FI_EOPNOTSUPP;
	if (!a->count || a->count > UREL_FI_ATOMIC_COUNT)
		return -FI_EINVAL;
	if ((!no_operand && !a->buf) || (a->kind == FI_COMPARE_ATOMIC && !a->compare) ||
	    (a->kind && !a->result))
		return -FI_EINVAL;
	if (a->flags & FI_REMOTE_CQ_DATA)
		return -FI_EOPNOTSUPP;
	bytes = a->count * size;
	if ((a->flags & FI_INJECT) && (a->kind || bytes > UREL_FI_INJECT_SIZE))
		return -FI_EINVAL;
	/* Operands are copied: elements posted later do not read the caller's buffers. */
	op = urel_fi_rma_new(ep, a->context, FI_ATOMIC | (a->kind ? FI_READ : FI_WRITE),
			     a->kind ? a->flags & ~FI_INJECT : a->flags, 2 * bytes);
	if (!op)
		return -FI_ENOMEM;
	op->kind = UREL_FI_RMA_ATOMIC;
	op->aop = aop;
	op->size = size;
	op->no_operand = no_operand;
	op->len = a->count;
	op->key = a->key;
	op->off = a->addr;
	op->buf = op->store;
	if (!no_operand)
		memcpy(op->buf, a->buf, bytes);
	if (a->kind == FI_COMPARE_ATOMIC) {
		memcpy(op->store + bytes, a->compare, bytes);
		op->compare = op->store + bytes;
	}
	op->result = a->result;
	return urel_fi_rma_submit(ep, op, a->dest);
}

/* The one local and one remote piece of a vector or message form. */
static int urel_fi_atomic_ioc(const struct fi_ioc *iov, size_t count, const void **buf, size_t *n)
{
	if (count != 1)
		return -FI_EINVAL;
	*buf = iov[0].addr;
	*n = iov[0].count;
	return 0;
}

static ssize_t urel_fi_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
				    fi_addr_t dest, uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct urel_fi_atomic_args a = {
		.buf = buf,
		.count = count,
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.context = context,
		.flags = container_of(ep, struct urel_fi_ep, fid)->tx_flags,
	};

	(void)desc;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
				     size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op, void *context)
{
	struct urel_fi_atomic_args a = {
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.context = context,
		.flags = container_of(ep, struct urel_fi_ep, fid)->tx_flags,
	};

	(void)desc;
	if (urel_fi_atomic_ioc(iov, count, &a.buf, &a.count))
		return -FI_EINVAL;
	return urel_fi_atomic_do(ep, &a);
}

static int urel_fi_atomic_msg(const struct fi_msg_atomic *msg, struct urel_fi_atomic_args *a)
{
	if (urel_fi_atomic_ioc(msg->msg_iov, msg->iov_count, &a->buf, &a->count) ||
	    msg->rma_iov_count != 1 || msg->rma_iov[0].count != a->count)
		return -FI_EINVAL;
	a->dest = msg->addr;
	a->addr = msg->rma_iov[0].addr;
	a->key = msg->rma_iov[0].key;
	a->datatype = msg->datatype;
	a->op = msg->op;
	a->context = msg->context;
	return 0;
}

static ssize_t urel_fi_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
				       uint64_t flags)
{
	struct urel_fi_atomic_args a = { .flags = flags };

	if (urel_fi_atomic_msg(msg, &a))
		return -FI_EINVAL;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_inject(struct fid_ep *ep, const void *buf, size_t count,
				     fi_addr_t dest, uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op)
{
	struct urel_fi_atomic_args a = {
		.buf = buf,
		.count = count,
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.flags = FI_INJECT,
	};

	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count,
					void *desc, void *result, void *result_desc, fi_addr_t dest,
					uint64_t addr, uint64_t key, enum fi_datatype datatype,
					enum fi_op op, void *context)
{
	struct urel_fi_atomic_args a = {
		.kind = FI_FETCH_ATOMIC,
		.buf = buf,
		.count = count,
		.result = result,
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.context = context,
		.flags = container_of(ep, struct urel_fi_ep, fid)->tx_flags,
	};

	(void)desc, (void)result_desc;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
					 size_t count, struct fi_ioc *resultv, void **result_desc,
					 size_t result_count, fi_addr_t dest, uint64_t addr,
					 uint64_t key, enum fi_datatype datatype, enum fi_op op,
					 void *context)
{
	struct urel_fi_atomic_args a = {
		.kind = FI_FETCH_ATOMIC,
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.context = context,
		.flags = container_of(ep, struct urel_fi_ep, fid)->tx_flags,
	};

	(void)desc, (void)result_desc;
	if (urel_fi_atomic_ioc(iov, count, &a.buf, &a.count) || result_count != 1 ||
	    resultv[0].count != a.count)
		return -FI_EINVAL;
	a.result = resultv[0].addr;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
					   struct fi_ioc *resultv, void **result_desc,
					   size_t result_count, uint64_t flags)
{
	struct urel_fi_atomic_args a = { .kind = FI_FETCH_ATOMIC, .flags = flags };

	(void)result_desc;
	if (urel_fi_atomic_msg(msg, &a) || result_count != 1 || resultv[0].count != a.count)
		return -FI_EINVAL;
	a.result = resultv[0].addr;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count,
					void *desc, const void *compare, void *compare_desc,
					void *result, void *result_desc, fi_addr_t dest,
					uint64_t addr, uint64_t key, enum fi_datatype datatype,
					enum fi_op op, void *context)
{
	struct urel_fi_atomic_args a = {
		.kind = FI_COMPARE_ATOMIC,
		.buf = buf,
		.count = count,
		.compare = compare,
		.result = result,
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.context = context,
		.flags = container_of(ep, struct urel_fi_ep, fid)->tx_flags,
	};

	(void)desc, (void)compare_desc, (void)result_desc;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
					 size_t count, const struct fi_ioc *comparev,
					 void **compare_desc, size_t compare_count,
					 struct fi_ioc *resultv, void **result_desc,
					 size_t result_count, fi_addr_t dest, uint64_t addr,
					 uint64_t key, enum fi_datatype datatype, enum fi_op op,
					 void *context)
{
	struct urel_fi_atomic_args a = {
		.kind = FI_COMPARE_ATOMIC,
		.dest = dest,
		.addr = addr,
		.key = key,
		.datatype = datatype,
		.op = op,
		.context = context,
		.flags = container_of(ep, struct urel_fi_ep, fid)->tx_flags,
	};

	(void)desc, (void)compare_desc, (void)result_desc;
	if (urel_fi_atomic_ioc(iov, count, &a.buf, &a.count) || compare_count != 1 ||
	    comparev[0].count != a.count || result_count != 1 || resultv[0].count != a.count)
		return -FI_EINVAL;
	a.compare = comparev[0].addr;
	a.result = resultv[0].addr;
	return urel_fi_atomic_do(ep, &a);
}

static ssize_t urel_fi_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
					   const struct fi_ioc *comparev, void **compare_desc,
					   size_t compare_count, struct fi_ioc *resultv,
					   void **result_desc, size_t result_count, uint64_t flags)
{
	struct urel_fi_atomic_args a = { .kind = FI_COMPARE_ATOMIC, .flags = flags };

	(void)compare_desc, (void)result_desc;
	if (urel_fi_atomic_msg(msg, &a) || compare_count != 1 || comparev[0].count != a.count ||
	    result_count != 1 || resultv[0].count != a.count)
		return -FI_EINVAL;
	a.compare = comparev[0].addr;
	a.result = resultv[0].addr;
	return urel_fi_atomic_do(ep, &a);
}

struct fi_ops_atomic urel_fi_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = urel_fi_atomic_write,
	.writev = urel_fi_atomic_writev,
	.writemsg = urel_fi_atomic_writemsg,
	.inject = urel_fi_atomic_inject,
	.readwrite = urel_fi_atomic_readwrite,
	.readwritev = urel_fi_atomic_readwritev,
	.readwritemsg = urel_fi_atomic_readwritemsg,
	.compwrite = urel_fi_atomic_compwrite,
	.compwritev = urel_fi_atomic_compwritev,
	.compwritemsg = urel_fi_atomic_compwritemsg,
	.writevalid = urel_fi_writevalid,
	.readwritevalid = urel_fi_readwritevalid,
	.compwritevalid = urel_fi_compwritevalid,
};
