/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: the checks of one-sided operations that need no state: a
 * descriptor from userspace, and a request's rights and range against the
 * registration its rkey found. Pure, so KUnit tests them directly.
 */
#ifndef _USNIC_REL_RDMA_CHECK_H
#define _USNIC_REL_RDMA_CHECK_H

#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/types.h>

#include "../../include/uapi/usnic_rel.h"
#include "../../include/uapi/usnic_rel_wire.h"

/*
 * Validate the kernel's copy of a PUT, GET or ATOMIC descriptor for an
 * endpoint with @staging_size bytes of staging. Returns 0 or the status its
 * completion gets.
 */
static inline int usnic_rel_rdma_sqe_valid(const struct usnic_rel_sqe *sqe,
					   u32 staging_size)
{
	const u64 *operand = sqe->atomic.operand;
	u32 size = sqe->atomic.atomic_size;
	u64 limit;

	if (sqe->reserved0 || sqe->reserved2[0] ||
	    sqe->reserved2[1])
		return -EINVAL;
	if (!sqe->len || sqe->remote_off + sqe->len < sqe->remote_off)
		return -EINVAL;
	switch (sqe->opcode) {
	case USNIC_REL_OP_PUT:
		if (sqe->flags & ~(USNIC_REL_SQE_INLINE | USNIC_REL_SQE_QUIET))
			return -EINVAL;
		if (sqe->flags & USNIC_REL_SQE_INLINE)
			return sqe->len > USNIC_REL_SQE_INLINE_MAX ||
			       sqe->staging_off ? -EINVAL : 0;
		break;
	case USNIC_REL_OP_GET:
		if (sqe->flags)
			return -EINVAL;
		break;
	case USNIC_REL_OP_ATOMIC:
		if (sqe->flags || sqe->staging_off)
			return -EINVAL;
		if (size != 4 && size != 8)
			return -EINVAL;
		if (sqe->len != size || sqe->remote_off & (size - 1))
			return -EINVAL;
		limit = size == 4 ? U32_MAX : U64_MAX;
		if (operand[0] > limit || operand[1] > limit)
			return -EINVAL;
		/* operand[0] adds or compares, operand[1] is stored. */
		switch (sqe->atomic.atomic_op) {
		case USNIC_REL_ATOMIC_FADD:
			return operand[1] ? -EINVAL : 0;
		case USNIC_REL_ATOMIC_SWAP:
			return operand[0] ? -EINVAL : 0;
		case USNIC_REL_ATOMIC_CAS:
			return 0;
		default:
			return -EINVAL;
		}
	default:
		return -EINVAL;
	}
	/* PUT from and GET into the staging area. */
	if ((u64)sqe->staging_off + sqe->len > staging_size)
		return -EINVAL;
	return 0;
}

/*
 * May a request needing the rights @need touch [@off, @off + @len) of a
 * registration of @mr_len bytes with rights @mr_access? Returns a wire
 * status. Written so that no sum can wrap.
 */
static inline u16 usnic_rel_rdma_range_status(u32 mr_access, u64 mr_len,
					      u32 need, u64 off, u64 len)
{
	if ((mr_access & need) != need)
		return USNIC_REL_ST_ACCESS;
	if (off > mr_len || len > mr_len - off)
		return USNIC_REL_ST_OUT_OF_BOUNDS;
	return USNIC_REL_ST_OK;
}

#endif /* _USNIC_REL_RDMA_CHECK_H */
