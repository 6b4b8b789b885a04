/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: reassembly of one message from its fragments.
 */
#ifndef _USNIC_REL_REASM_H
#define _USNIC_REL_REASM_H

#include <linux/gfp.h>
#include <linux/types.h>

/* Disjoint byte ranges one message may be split into while incomplete. */
#define USNIC_REL_REASM_MAX_RANGES	16

enum usnic_rel_reasm_result {
	USNIC_REL_REASM_MORE,		/* stored; bytes still missing */
	USNIC_REL_REASM_COMPLETE,	/* stored; every byte is here */
	USNIC_REL_REASM_DUPLICATE,	/* nothing new; nothing changed */
	USNIC_REL_REASM_BAD,		/* disagrees with the message */
	USNIC_REL_REASM_TOO_SCATTERED,	/* would need too many ranges */
};

struct usnic_rel_reasm_range {
	u32 start;
	u32 end;	/* exclusive */
};

struct usnic_rel_reasm {
	u8 *buf;	/* msg_len bytes, NULL for an empty message */
	u32 msg_id;
	u32 msg_len;
	u64 imm;
	u32 covered;	/* bytes received, overlaps counted once */
	u32 nr;		/* ranges in use, sorted, neither touching */
	struct usnic_rel_reasm_range r[USNIC_REL_REASM_MAX_RANGES];
};

int usnic_rel_reasm_start(struct usnic_rel_reasm *m, u32 msg_id, u32 msg_len,
			  u64 imm, gfp_t gfp);
enum usnic_rel_reasm_result usnic_rel_reasm_add(struct usnic_rel_reasm *m,
						u32 msg_len, u64 imm,
						u32 offset, const void *data,
						u32 len);
void *usnic_rel_reasm_take(struct usnic_rel_reasm *m);
void usnic_rel_reasm_abort(struct usnic_rel_reasm *m);

static inline bool usnic_rel_reasm_complete(const struct usnic_rel_reasm *m)
{
	return m->covered == m->msg_len;
}

#endif /* _USNIC_REL_REASM_H */
