// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the table of outstanding operations of an endpoint. The
 * user_ctx of each send descriptor names a slot and its generation, so a
 * completion finds what it must release (staging space, where a get's bytes
 * or an atomic's old value go) without trusting a pointer read back from
 * memory the kernel writes. Callers hold tx_lock.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define UREL_OPS_NIL UINT32_MAX

int urel_ops_init(struct urel_ep *ep, uint32_t entries)
{
	uint32_t n = 1;

	while (n < entries)
		n <<= 1;
	ep->ops = calloc(n, sizeof(*ep->ops));
	if (!ep->ops)
		return -ENOMEM;
	ep->ops_mask = n - 1;
	for (uint32_t i = 0; i < n; i++)
		ep->ops[i].next_free = i + 1 < n ? i + 1 : UREL_OPS_NIL;
	ep->ops_free = 0;
	return 0;
}

void urel_ops_fini(struct urel_ep *ep)
{
	free(ep->ops);
	ep->ops = NULL;
}

struct urel_op *urel_op_alloc(struct urel_ep *ep, uint64_t *user_ctx)
{
	uint32_t i = ep->ops_free;
	struct urel_op *op;

	if (i == UREL_OPS_NIL)
		return NULL;
	op = &ep->ops[i];
	ep->ops_free = op->next_free;
	op->busy = true;
	op->gen++;
	*user_ctx = (uint64_t)op->gen << 32 | i;
	return op;
}

struct urel_op *urel_op_find(struct urel_ep *ep, uint64_t user_ctx)
{
	uint32_t i = (uint32_t)user_ctx;
	struct urel_op *op;

	if (i > ep->ops_mask)
		return NULL;
	op = &ep->ops[i];
	if (!op->busy || op->gen != (uint32_t)(user_ctx >> 32))
		return NULL;
	return op;
}

void urel_op_free(struct urel_ep *ep, struct urel_op *op)
{
	uint32_t i = (uint32_t)(op - ep->ops);

	op->busy = false;
	op->next_free = ep->ops_free;
	ep->ops_free = i;
}
