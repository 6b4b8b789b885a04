// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the handshake that pairs our side of a connection with one
 * incarnation of the peer, in the spirit of RFC 5961's challenge ACK and
 * WireGuard's cookie. A UDP source address proves nothing, so a packet from
 * an incarnation we are not paired with changes nothing: it costs a counter
 * and at most one rate-limited HELLO back to the peer's address (never
 * longer than the packet that asked for it), and that HELLO carries a
 * random cookie. Only a HELLO that echoes the cookie, which only someone
 * who receives the peer address's packets can know, opens, resets or
 * re-opens the connection (usnic_rel_hello_classify()).
 *
 * The exchange, from A (no pairing yet, or a new epoch) to B:
 *
 *	A -> B	HELLO src=a dst=?  cookie=ca echo=?   ACK_REQ
 *	B -> A	HELLO src=b dst=a  cookie=cb echo=ca  ACK_REQ  (challenge)
 *	A -> B	HELLO src=a dst=b  cookie=ca' echo=cb          (A paired)
 *	B -> A	HELLO src=b dst=a  cookie=cb' echo=ca'         (B paired)
 *
 * Each HELLO announces its sender's initial sequence numbers, which the
 * receiver adopts when it pairs. Until B is paired with a, B's connection
 * with an earlier incarnation of A keeps working.
 */
#include <linux/jiffies.h>
#include <linux/random.h>

#include "conn.h"
#include "handshake.h"
#include "usnic_rel.h"
#include "trace.h"
#include "wire.h"

#define USNIC_REL_HELLO_LEN \
	(sizeof(struct usnic_rel_hdr) + sizeof(struct usnic_rel_hello_hdr))

/* The trace event prints the verdicts by number. */
static_assert(USNIC_REL_HELLO_UNVERIFIED == 0 && USNIC_REL_HELLO_CURRENT == 1 &&
	      USNIC_REL_HELLO_PAIR == 2 && USNIC_REL_HELLO_STALE == 3);

/* At most one challenge per connection in this interval. */
#define USNIC_REL_HS_INTERVAL	msecs_to_jiffies(20)

/*
 * Draw a new epoch for our side: incarnation, cookie and initial sequence
 * numbers, and forget the pairing. Caller holds conn->lock or owns @conn.
 */
void usnic_rel_hs_new_epoch(struct usnic_rel_conn *conn)
{
	u32 old = conn->local_incarnation, inc;
	int i;

	do {
		inc = get_random_u32();
	} while (!inc || inc == old);
	conn->local_incarnation = inc;
	conn->cookie = get_random_u64() ?: 1;
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		conn->tx_isn[i] = get_random_u32();
	conn->remote_incarnation = 0;
	conn->prev_incarnation = 0;
	conn->hs_echo = 0;
	conn->hs_dst = 0;
	conn->hs_unconfirmed = false;
	conn->hs_stats.hello_sent = false;
}

/* A HELLO must go out to @dst, echoing @echo. Caller holds conn->lock. */
static void usnic_rel_hs_owe(struct usnic_rel_peer *peer, u32 dst, u64 echo)
{
	struct usnic_rel_conn *conn = &peer->conn;

	conn->hs_dst = dst;
	conn->hs_echo = echo;
	conn->hs_owed = true;
	usnic_rel_tx_work_kick(peer);
}

/*
 * Answer a packet that gave no proof, within the rate and size limits.
 * Caller holds conn->lock.
 */
static void usnic_rel_hs_challenge(struct usnic_rel_ep *ep,
				   struct usnic_rel_peer *peer, u32 dst,
				   u64 echo, size_t len)
{
	struct usnic_rel_conn *conn = &peer->conn;

	if (!usnic_rel_hs_may_answer(len, USNIC_REL_HELLO_LEN, jiffies,
				     conn->hs_next)) {
		usnic_rel_count(ep, USNIC_REL_CNT_CHALLENGES_LIMITED, 1);
		return;
	}
	conn->hs_next = jiffies + USNIC_REL_HS_INTERVAL;
	usnic_rel_count(ep, USNIC_REL_CNT_CHALLENGES_SENT, 1);
	usnic_rel_hs_owe(peer, dst, echo);
}

/*
 * We need the pairing (a send is waiting, or the peer is dead and we are
 * asked to send): send a HELLO, at most once per challenge interval.
 * Caller holds conn->lock.
 */
void usnic_rel_hs_start(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;

	if (conn->hs_owed || time_before(jiffies, conn->hs_next))
		return;
	conn->hs_next = jiffies + USNIC_REL_HS_INTERVAL;
	conn->hs_owed = true;
	usnic_rel_tx_work_kick(peer);
}

/*
 * Packets numbered before the pairing were built for no peer incarnation
 * and wait in the window unsent: name the peer in them, drop their ACK
 * fields (they acknowledge nothing of the new pairing) and send them.
 * Caller holds conn->lock.
 */
static void usnic_rel_hs_release(struct usnic_rel_conn *conn)
{
	__be32 dst = cpu_to_be32(conn->remote_incarnation);
	int i;
	u32 s;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		for (s = c->tx.una; s != c->tx.next; s++) {
			struct usnic_rel_txbuf *b = usnic_rel_txwin_pkt(&c->tx, s);
			struct usnic_rel_hdr h;

			if (!b)
				continue;
			memcpy(&h, b->data, sizeof(h));
			h.dst_incarnation = dst;
			h.flags &= ~USNIC_REL_F_ACK;
			h.ack = 0;
			h.sack = 0;
			memcpy(b->data, &h, sizeof(h));
		}
		if (usnic_rel_txwin_inflight(&c->tx)) {
			/*
			 * Send them all now, not at the first timeout: a new
			 * epoch makes every one due. They never left, so they
			 * count as first transmissions.
			 */
			c->tx.epoch++;
			c->retx_all = true;
			c->retx_held = true;
			c->retx_sent_before = U64_MAX;
		}
	}
}

/*
 * A verified HELLO from a new incarnation of the peer: pair with it. What
 * was in flight to an earlier pairing is lost (-ECONNRESET); a dead peer
 * comes back to life. Caller holds conn->lock.
 */
static void usnic_rel_hs_pair(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer,
			      const struct usnic_rel_pkt *pkt)
{
	struct usnic_rel_conn *conn = &peer->conn;
	u64 old = conn->cookie;
	int i;

	if (conn->remote_incarnation) {
		usnic_rel_conn_fail_all(ep, peer, -ECONNRESET);
		conn->prev_incarnation = conn->remote_incarnation;
		usnic_rel_count(ep, USNIC_REL_CNT_PEER_RESETS, 1);
	}
	conn->remote_incarnation = pkt->src_incarnation;
	/* Fixed for the incarnation's life: longer sends fail (send.c). */
	conn->peer_rx_limit = pkt->hello.rx_limit;
	conn->state = USNIC_REL_CONN_ACTIVE;
	/* A late copy of this HELLO must not verify a later pairing. */
	do {
		conn->cookie = get_random_u64();
	} while (!conn->cookie || conn->cookie == old);
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		usnic_rel_rxwin_reset(&conn->chan[i].rx, pkt->hello.isn[i]);
	usnic_rel_hs_release(conn);
	usnic_rel_rto_paired(&conn->rto);
	usnic_rel_count(ep, USNIC_REL_CNT_HANDSHAKES, 1);
	conn->hs_stats.pairings++;
	conn->hs_stats.stalled = false;
	/*
	 * Our proof for the peer, which has not paired with us yet if it asked
	 * for it. Until a packet of the pairing comes from it, the proof goes
	 * again with every retransmission timeout (timers.c): were it lost,
	 * the peer would drop all we release as unverified, and its
	 * challenges are rate-limited and may be lost too.
	 */
	conn->hs_unconfirmed = pkt->flags & USNIC_REL_F_ACK_REQ;
	usnic_rel_hs_owe(peer, pkt->src_incarnation, pkt->hello.cookie);
	usnic_rel_rtx_timer_arm(peer, true);
}

/* A HELLO from @peer's address. Caller holds conn->lock. */
void usnic_rel_hs_rx_hello(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			   const struct usnic_rel_pkt *pkt, size_t len)
{
	struct usnic_rel_conn *conn = &peer->conn;
	enum usnic_rel_hello_verdict v;

	v = usnic_rel_hello_classify(conn->local_incarnation, conn->cookie,
				     conn->remote_incarnation,
				     conn->prev_incarnation,
				     pkt->src_incarnation, pkt->dst_incarnation,
				     pkt->hello.echo);
	trace_usnic_rel_handshake(ep->debug_id, peer->handle, pkt, v);
	conn->hs_stats.hellos_rx++;
	switch (v) {
	case USNIC_REL_HELLO_STALE:
		usnic_rel_count(ep, USNIC_REL_CNT_RX_STALE, 1);
		break;
	case USNIC_REL_HELLO_UNVERIFIED:
		usnic_rel_count(ep, USNIC_REL_CNT_RX_UNVERIFIED, 1);
		conn->hs_stats.unverified_rx++;
		usnic_rel_hs_challenge(ep, peer, pkt->src_incarnation,
				       pkt->hello.cookie, len);
		break;
	case USNIC_REL_HELLO_CURRENT:
		/* Already paired; answer only a peer that asks for our proof. */
		if (pkt->flags & USNIC_REL_F_ACK_REQ)
			usnic_rel_hs_challenge(ep, peer, pkt->src_incarnation,
					       pkt->hello.cookie, len);
		else
			conn->hs_unconfirmed = false;	/* it paired with us */
		break;
	case USNIC_REL_HELLO_PAIR:
		usnic_rel_hs_pair(ep, peer, pkt);
		break;
	}
}

/*
 * A sequenced packet or ACK from an incarnation we are not paired with:
 * count it and ask the sender to prove itself. Caller holds conn->lock.
 */
void usnic_rel_hs_rx_unverified(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer,
				const struct usnic_rel_pkt *pkt, size_t len)
{
	usnic_rel_count(ep, USNIC_REL_CNT_RX_UNVERIFIED, 1);
	peer->conn.hs_stats.unverified_rx++;
	usnic_rel_hs_challenge(ep, peer, pkt->src_incarnation, 0, len);
}

/* Send the HELLO owed to @peer, if any. Caller holds tx_lock. */
void usnic_rel_hs_send(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	u8 buf[USNIC_REL_HELLO_LEN];
	struct usnic_rel_pkt pkt;
	size_t len = 0;
	int i;

	spin_lock_bh(&conn->lock);
	if (conn->hs_owed && conn->state != USNIC_REL_CONN_REMOVED) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = USNIC_REL_PKT_HELLO;
		pkt.src_incarnation = conn->local_incarnation;
		pkt.dst_incarnation = conn->hs_dst;
		/* Not paired with the incarnation we talk to: we want its proof. */
		if (!conn->remote_incarnation ||
		    conn->remote_incarnation != conn->hs_dst)
			pkt.flags = USNIC_REL_F_ACK_REQ;
		pkt.hello.cookie = conn->cookie;
		pkt.hello.echo = conn->hs_echo;
		for (i = 0; i < USNIC_REL_NR_CHANS; i++)
			pkt.hello.isn[i] = conn->tx_isn[i];
		pkt.hello.rx_limit = ep->rx_buf_size;
		len = usnic_rel_wire_build(buf, sizeof(buf), &pkt);
		conn->hs_stats.hello_sent = true;
		conn->hs_stats.hellos_sent++;
	}
	conn->hs_owed = false;
	spin_unlock_bh(&conn->lock);
	if (len) {
		usnic_rel_xmit(ep, peer, buf, len);
		usnic_rel_count(ep, USNIC_REL_CNT_HELLOS_SENT, 1);
	}
}
