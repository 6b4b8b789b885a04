// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: message reassembly.
 *
 * What has arrived is kept as a short sorted list of disjoint byte ranges
 * rather than a bitmap of fragments: a bitmap assumes every fragment is cut
 * at the same boundaries, which a retransmission after an MTU change breaks,
 * while ranges take any cut and make overlaps and duplicates trivial. The
 * receive window delivers in order, so an honest peer's message is one
 * growing range; the cap on ranges only bounds what a hostile peer costs.
 *
 * Not locked: the caller serialises all calls on one message.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kunit/visibility.h>
#include "reasm.h"
#include "../../include/uapi/usnic_rel_wire.h"

/**
 * usnic_rel_reasm_start() - begin a message, from its first fragment to arrive
 * @m: the reassembly state
 * @msg_id: the message's id
 * @msg_len: its length, at most USNIC_REL_WIRE_MAX_MSG
 * @imm: its immediate, which every fragment must repeat
 * @gfp: allocation flags for the buffer
 *
 * Return: 0, -EMSGSIZE, or -ENOMEM.
 */
int usnic_rel_reasm_start(struct usnic_rel_reasm *m, u32 msg_id, u32 msg_len,
			  u64 imm, gfp_t gfp)
{
	memset(m, 0, sizeof(*m));
	if (msg_len > USNIC_REL_WIRE_MAX_MSG)
		return -EMSGSIZE;
	if (msg_len) {
		m->buf = kvmalloc(msg_len, gfp);
		if (!m->buf)
			return -ENOMEM;
	}
	m->msg_id = msg_id;
	m->msg_len = msg_len;
	m->imm = imm;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_reasm_start);

/*
 * Merge [start, end) into the range list. Returns the bytes it added, or -1
 * if that would take more than USNIC_REL_REASM_MAX_RANGES ranges.
 */
static s64 usnic_rel_reasm_insert(struct usnic_rel_reasm *m, u32 start,
				  u32 end)
{
	struct usnic_rel_reasm_range *r = m->r;
	u32 i, j, k, old = 0;

	/* r[i..j) are the ranges that overlap or touch [start, end). */
	for (i = 0; i < m->nr && r[i].end < start; i++)
		;
	for (j = i; j < m->nr && r[j].start <= end; j++)
		old += r[j].end - r[j].start;

	if (i == j) {
		if (m->nr == USNIC_REL_REASM_MAX_RANGES)
			return -1;
		memmove(&r[i + 1], &r[i], (m->nr - i) * sizeof(*r));
		m->nr++;
	} else {
		start = min(start, r[i].start);
		end = max(end, r[j - 1].end);
		for (k = j; k < m->nr; k++)
			r[i + 1 + k - j] = r[k];
		m->nr -= j - i - 1;
	}
	r[i].start = start;
	r[i].end = end;
	return (s64)(end - start) - old;
}

/**
 * usnic_rel_reasm_add() - store one fragment
 * @m: the reassembly state
 * @msg_len: total length the fragment claims; must match the message
 * @imm: immediate the fragment carries; must match the message
 * @offset: where the fragment goes in the message
 * @data: its payload
 * @len: payload length, non-zero unless the message is empty
 *
 * Fragments may come in any order, repeated or overlapping; overlapping bytes
 * are simply written again. A fragment that disagrees with the message is
 * refused and the caller should abort the message.
 *
 * Return: the outcome.
 */
enum usnic_rel_reasm_result usnic_rel_reasm_add(struct usnic_rel_reasm *m,
						u32 msg_len, u64 imm,
						u32 offset, const void *data,
						u32 len)
{
	s64 added;

	if (msg_len != m->msg_len || imm != m->imm || offset > m->msg_len ||
	    len > m->msg_len - offset || (!len && m->msg_len))
		return USNIC_REL_REASM_BAD;
	if (!m->msg_len)
		return USNIC_REL_REASM_COMPLETE;

	added = usnic_rel_reasm_insert(m, offset, offset + len);
	if (added < 0)
		return USNIC_REL_REASM_TOO_SCATTERED;
	if (!added)
		return USNIC_REL_REASM_DUPLICATE;
	memcpy(m->buf + offset, data, len);
	m->covered += added;
	return usnic_rel_reasm_complete(m) ? USNIC_REL_REASM_COMPLETE :
					     USNIC_REL_REASM_MORE;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_reasm_add);

/**
 * usnic_rel_reasm_take() - hand over a complete message's buffer
 * @m: the reassembly state, reset afterwards
 *
 * Return: the buffer, which the caller frees with kvfree(); NULL for an
 * empty message.
 */
void *usnic_rel_reasm_take(struct usnic_rel_reasm *m)
{
	void *buf = m->buf;

	memset(m, 0, sizeof(*m));
	return buf;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_reasm_take);

/* Drop an incomplete (or unwanted) message and free its buffer. */
void usnic_rel_reasm_abort(struct usnic_rel_reasm *m)
{
	kvfree(m->buf);
	memset(m, 0, sizeof(*m));
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_reasm_abort);
