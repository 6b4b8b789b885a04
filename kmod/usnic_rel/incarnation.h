/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: what a packet's incarnations say about its sender and about us.
 */
#ifndef _USNIC_REL_INCARNATION_H
#define _USNIC_REL_INCARNATION_H

#include <linux/types.h>

enum usnic_rel_inc_verdict {
	USNIC_REL_INC_OK,		/* from the peer we know, to us */
	USNIC_REL_INC_NEW_PEER,		/* first packet from this peer */
	USNIC_REL_INC_RESTARTED,	/* peer restarted: reset its state */
	USNIC_REL_INC_STALE_DST,	/* for an earlier incarnation of ours */
	USNIC_REL_INC_STALE_SRC,	/* late packet of the peer's old self */
};

/**
 * usnic_rel_incarnation_check() - classify a packet by its incarnations
 * @local: our incarnation
 * @known: the peer's incarnation as we know it, 0 if none yet
 * @prev: the peer's incarnation before @known, 0 if none
 * @src: the packet's source incarnation (never 0 after parsing)
 * @dst: the packet's destination incarnation, 0 if the sender has not
 *	heard from us yet
 *
 * Incarnations are random, so an old one cannot be told from a new one by
 * value; remembering the previous one keeps a late packet of a dead peer
 * from "restarting" it back. The caller drops STALE_*, records @src on
 * NEW_PEER, and on RESTARTED fails what was in flight, resets both windows
 * and sets prev = known, known = src.
 *
 * Return: the verdict.
 */
static inline enum usnic_rel_inc_verdict
usnic_rel_incarnation_check(u32 local, u32 known, u32 prev, u32 src, u32 dst)
{
	if (dst && dst != local)
		return USNIC_REL_INC_STALE_DST;
	if (known && src == known)
		return USNIC_REL_INC_OK;
	if (prev && src == prev)
		return USNIC_REL_INC_STALE_SRC;
	return known ? USNIC_REL_INC_RESTARTED : USNIC_REL_INC_NEW_PEER;
}

#endif /* _USNIC_REL_INCARNATION_H */
