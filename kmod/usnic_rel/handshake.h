/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: what a packet's incarnations and a HELLO's echo say about its
 * sender. Pure decisions, unit-tested; handshake.c acts on them.
 *
 * A connection pairs our incarnation (@local, random per connection epoch)
 * with the peer's (@remote, 0 until a handshake verified one). Only the
 * paired peer may use the connection, and only a verified HELLO, one that
 * echoes our cookie (sent only to the peer's address), may pair it anew.
 */
#ifndef _USNIC_REL_HANDSHAKE_H
#define _USNIC_REL_HANDSHAKE_H

#include <linux/jiffies.h>
#include <linux/types.h>

enum usnic_rel_hs_verdict {
	USNIC_REL_HS_OK,		/* from the paired peer, to this epoch */
	USNIC_REL_HS_UNVERIFIED,	/* not paired: at most a challenge */
	USNIC_REL_HS_STALE_DST,		/* for another epoch of ours: drop */
	USNIC_REL_HS_STALE_SRC,		/* late packet of the peer's old self */
};

/**
 * usnic_rel_hs_classify() - classify a sequenced packet or ACK
 * @local: our incarnation of the connection
 * @remote: the paired peer incarnation, 0 if none
 * @prev: the peer incarnation paired before @remote, 0 if none
 * @src: the packet's source incarnation (never 0 after parsing)
 * @dst: the packet's destination incarnation
 *
 * Return: the verdict. Nothing but USNIC_REL_HS_OK may touch the windows.
 */
static inline enum usnic_rel_hs_verdict
usnic_rel_hs_classify(u32 local, u32 remote, u32 prev, u32 src, u32 dst)
{
	if (remote && src == remote)
		return dst == local ? USNIC_REL_HS_OK : USNIC_REL_HS_STALE_DST;
	if (prev && src == prev)
		return USNIC_REL_HS_STALE_SRC;
	return USNIC_REL_HS_UNVERIFIED;
}

enum usnic_rel_hello_verdict {
	USNIC_REL_HELLO_UNVERIFIED,	/* no proof: answer with a challenge */
	USNIC_REL_HELLO_CURRENT,	/* verified, already paired: nothing */
	USNIC_REL_HELLO_PAIR,		/* verified, new incarnation: pair it */
	USNIC_REL_HELLO_STALE,		/* the peer's previous self: drop */
};

/**
 * usnic_rel_hello_classify() - classify a HELLO
 * @local: our incarnation of the connection
 * @cookie: our current cookie for the connection
 * @remote: the paired peer incarnation, 0 if none
 * @prev: the peer incarnation paired before @remote, 0 if none
 * @src: the HELLO's source incarnation
 * @dst: the HELLO's destination incarnation
 * @echo: the HELLO's echo of our cookie
 *
 * Our cookie is redrawn at every pairing, so a late verified HELLO of an
 * earlier pairing no longer verifies.
 *
 * Return: the verdict; only USNIC_REL_HELLO_PAIR changes the connection.
 */
static inline enum usnic_rel_hello_verdict
usnic_rel_hello_classify(u32 local, u64 cookie, u32 remote, u32 prev, u32 src,
			 u32 dst, u64 echo)
{
	if (prev && src == prev && src != remote)
		return USNIC_REL_HELLO_STALE;
	if (dst != local || !cookie || echo != cookie)
		return USNIC_REL_HELLO_UNVERIFIED;
	return src == remote ? USNIC_REL_HELLO_CURRENT : USNIC_REL_HELLO_PAIR;
}

/**
 * usnic_rel_hs_may_answer() - may an unverified packet get a challenge
 * @trigger_len: the UDP payload length of the packet
 * @hello_len: the length of the HELLO we would send
 * @now: the time now (jiffies)
 * @next: the earliest time for the next challenge on this connection
 *
 * No amplification (never more bytes than the trigger) and at most one
 * challenge per interval and connection.
 *
 * Return: true to send a challenge.
 */
static inline bool usnic_rel_hs_may_answer(size_t trigger_len, size_t hello_len,
					   unsigned long now, unsigned long next)
{
	return trigger_len >= hello_len && !time_before(now, next);
}

#endif /* _USNIC_REL_HANDSHAKE_H */
