// SPDX-License-Identifier: MIT
/*
 * Host unit test: the table of outstanding operations hands out every slot
 * once, refuses when full, and a completion naming a freed slot, a slot's
 * earlier generation or a slot out of range finds nothing.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../../lib/internal.h"

#include "urt.h"

int main(void)
{
	struct urel_ep ep;
	struct urel_op *op[8];
	uint64_t ctx[8], extra, old;

	memset(&ep, 0, sizeof(ep));
	URT_CHECK_EQ(urel_ops_init(&ep, 5), 0);
	URT_CHECK_EQ(ep.ops_mask, 7);
	for (int i = 0; i < 8; i++) {
		op[i] = urel_op_alloc(&ep, &ctx[i]);
		URT_CHECK(op[i] != NULL);
		for (int j = 0; j < i; j++)
			URT_CHECK(op[i] != op[j] && ctx[i] != ctx[j]);
	}
	URT_CHECK(urel_op_alloc(&ep, &extra) == NULL);
	for (int i = 0; i < 8; i++)
		URT_CHECK(urel_op_find(&ep, ctx[i]) == op[i]);

	old = ctx[3];
	urel_op_free(&ep, op[3]);
	URT_CHECK(urel_op_find(&ep, old) == NULL);
	/* The slot comes back with a new generation: the old name stays dead. */
	URT_CHECK(urel_op_alloc(&ep, &ctx[3]) == op[3]);
	URT_CHECK(ctx[3] != old);
	URT_CHECK(urel_op_find(&ep, old) == NULL);
	URT_CHECK(urel_op_find(&ep, ctx[3]) == op[3]);

	URT_CHECK(urel_op_find(&ep, 8) == NULL);
	URT_CHECK(urel_op_find(&ep, UINT64_MAX) == NULL);
	URT_CHECK(urel_op_find(&ep, 0) == NULL); /* generation 0 is never handed out */
	for (int i = 0; i < 8; i++)
		urel_op_free(&ep, op[i]);
	for (int i = 0; i < 8; i++)
		URT_CHECK(urel_op_alloc(&ep, &ctx[i]) != NULL);
	urel_ops_fini(&ep);
	return urt_done("unit_ops");
}
