/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: the reliable connection to one peer: per channel a send window
 * holding copies of the packets in flight and a receive window holding the
 * packets that arrived out of order; one retransmit timer, one delayed-ACK
 * timer and one work item that transmits from process context.
 *
 * Locking: conn->lock (spin, BH) protects everything here. It nests inside
 * ep->tx_lock and outside ep->rx_lock. Packets are built under the lock and
 * transmitted after it is dropped, under ep->tx_lock, but for the one-packet
 * answers sent from the receive softirq (rdma.c): those are built under
 * conn->lock alone and sent by the softirq once it dropped conn->lock.
 */
#ifndef _USNIC_REL_CONN_H
#define _USNIC_REL_CONN_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "rto.h"
#include "rxwin.h"
#include "txwin.h"
#include "../../include/uapi/usnic_rel.h"

struct usnic_rel_ep;
struct usnic_rel_peer;

/*
 * Window slots unused for this long are given back (ep->win_reap): an idle
 * window is freed after one to two periods.
 */
#define USNIC_REL_WIN_REAP_PERIOD	HZ

/*
 * One packet as it goes on the wire, kept until acknowledged so that it can
 * be sent again. The last packet of a send carries its completion.
 */
struct usnic_rel_txbuf {
	refcount_t ref;
	u32 len;
	bool completes;			/* post @cqe once acknowledged */
	u32 size;			/* allocated, for ep->tx_buf_bytes */
	struct usnic_rel_cqe cqe;
	/* A PACKED packet's messages: their completions, after the packet. */
	u32 nr_packed;
	struct usnic_rel_cqe *packed_cqe;
	u8 data[];
};

/* A message being received: fragments arrive in order into one buffer. */
struct usnic_rel_rx_msg {
	bool active;
	u32 buf;			/* receive buffer index */
	u32 msg_id;
	u32 msg_len;
	u32 received;
	u64 imm;
	bool refused;			/* too long: dropped as it comes */
	/*
	 * Messages of the PACKED packet @packed_seq already delivered, when
	 * buffers ran out part-way: it comes again (held or resent) and goes
	 * on from there. Zero once a packed packet is all delivered.
	 */
	u32 packed_seq;
	u32 packed_done;
};

/*
 * A one-sided operation this side started. Linked into its channel's ops
 * when its first request packet is numbered; from then on the connection
 * completes it (response, peer death or reset). Responses come in request
 * order, so the oldest op is the only one a response may answer.
 */
struct usnic_rel_rdma_op {
	struct list_head node;		/* in chan->ops while linked */
	u32 op_id;			/* sequence of its first request packet */
	u8 req_type;			/* USNIC_REL_PKT_PUT, _GET_REQ, _ATOMIC_REQ */
	bool linked;
	bool in_sq;			/* the send path still holds it */
	bool done;			/* completed while the send path held it */
	bool quiet;			/* PUT answered by a later answer (wire.h) */
	u32 len;
	u32 staging_off;		/* GET: where the bytes land */
	u32 received;			/* GET: bytes landed so far */
	struct usnic_rel_cqe cqe;
};

/* An answer owed to the peer, sent in request order by the work item. */
struct usnic_rel_rdma_resp {
	struct list_head node;
	u8 type;			/* USNIC_REL_PKT_GET_RESP, _ATOMIC_RESP, _STATUS */
	u8 req_type;			/* STATUS: type of the request answered */
	u16 status;			/* STATUS: enum usnic_rel_wire_status */
	u32 op_id;
	u64 old;			/* ATOMIC_RESP */
	struct usnic_rel_mr *mr;	/* GET_RESP: referenced until all sent */
	u64 offset;
	u32 len;
	u32 sent;
	u32 quiet;			/* quiet PUTs applied before its request */
};

/* A PUT being applied here; its fragments arrive in order. */
struct usnic_rel_rx_put {
	bool active;
	bool failed;			/* refused: the rest is dropped */
	u32 flags;			/* USNIC_REL_PUT_F_*, of every fragment */
	u32 op_id;
	u32 op_len;
	u32 next;			/* frag_offset expected next */
};

struct usnic_rel_chan_conn {
	struct usnic_rel_txwin tx;	/* packets: struct usnic_rel_txbuf */
	struct usnic_rel_rxwin rx;	/* held packets: struct sk_buff */
	struct sk_buff_head backlog;	/* in order, waiting for a buffer */
	struct usnic_rel_rx_msg msg;
	u32 next_msg_id;
	struct list_head ops;		/* struct usnic_rel_rdma_op, oldest first */
	struct list_head resps;		/* struct usnic_rel_rdma_resp, oldest first */
	u32 nr_resps;
	/* Quiet PUTs applied since the last answer queued: the next one says. */
	u32 quiet_done;
	struct usnic_rel_rx_put put;
	struct list_head sendq;		/* struct usnic_rel_sq_cur, parked in order */
	struct {			/* the last message the peer refused */
		bool valid;
		u32 epoch;		/* conn->epoch when it said so */
		u32 msg_id;
	} refused;
	u32 nr_parked;			/* changed under tx_lock and conn->lock */
	bool ack_pending;		/* an ACK is owed for this channel */
	bool rnr_owed;			/* ... saying we dropped for want of buffers */
	u32 rnr_seq;			/* the last one said so for this sequence */
	u64 rnr_ns;			/* ... at this time */
	bool persist_owed;		/* ask the peer holding our packets for an ACK */
	bool retx_pending;		/* holes to resend (fast retransmit) */
	bool retx_all;			/* resend all unacked (timeout) */
	bool retx_held;			/* ... held for the pairing: first sends */
	bool retx_local;		/* resend what never left the host */
	u64 retx_sent_before;		/* ... that were sent before this time */
	bool retx_probe;		/* resend the newest unacked (tail probe) */
	u64 retx_timeout;		/* packets resent: timer (debugfs) */
	u64 retx_fast;			/* packets resent: fast retransmit */
	/* Congestion control (cwnd.c, in tx.cc); loss marks in tx. */
	bool cc_lost_by_timeout;	/* the last finding was the timer's */
	bool cc_lost_held;		/* ... or held for the pairing */
	u64 cc_timeouts_counted;	/* tx.cc.rto_episodes in the counters */
	u64 cc_spared_counted;	/* tx.cc.losses_spared in the counters */
};

/* Why the connection stopped; outstanding sends complete with this error. */
enum usnic_rel_conn_state {
	USNIC_REL_CONN_ACTIVE,
	USNIC_REL_CONN_DEAD,		/* retry limit or stall: -ETIMEDOUT */
	USNIC_REL_CONN_REMOVED,		/* AV_REMOVE or endpoint teardown */
};

/*
 * The connection epoch and handshake (handshake.c). Our side's epoch is
 * @local_incarnation with its cookie and initial sequence numbers; it is
 * paired with the peer's @remote_incarnation once a HELLO echoed our cookie.
 */
struct usnic_rel_conn {
	spinlock_t lock;		/* everything in this structure */
	enum usnic_rel_conn_state state;
	u32 epoch;			/* new sequence space: new value, unique per ep */
	u32 local_incarnation;		/* ours, random, never 0 */
	u32 remote_incarnation;		/* paired peer's, 0 until verified */
	u32 prev_incarnation;		/* paired before a restart: stale */
	u32 tx_isn[USNIC_REL_NR_CHANS];	/* our initial sequences, this epoch */
	u32 peer_rx_limit;		/* longest message the paired peer takes */
	u64 cookie;			/* our challenge, redrawn at each pairing */
	u64 hs_echo;			/* the peer's cookie, echoed in our HELLO */
	u32 hs_dst;			/* dst_incarnation of our next HELLO */
	bool hs_owed;			/* a HELLO must go out (tx_work) */
	bool hs_unconfirmed;		/* paired on its challenge: our proof may be lost */
	unsigned long hs_next;		/* jiffies: no challenge before this */
	struct {			/* debugfs: why a peer does not talk */
		bool hello_sent;	/* by us, since our epoch began */
		bool stalled;		/* dead by stall_timeout_ms */
		u32 hellos_sent;
		u32 hellos_rx;
		u32 unverified_rx;	/* from incarnations not paired with us */
		u32 pairings;
		unsigned long last_rx;	/* jiffies of the peer's last packet, 0: none */
	} hs_stats;
	struct usnic_rel_rto rto;
	/* The receive path tries to send a new answer itself (rdma.c). */
	bool resp_kick_held;		/* queueing one does not kick tx_work */
	bool resp_kick_owed;		/* ... and one was queued meanwhile */
	/* It sends an ACK owed at once itself too (receive.c). */
	bool ack_kick_held;		/* an ACK owed now does not kick tx_work */
	u8 ack_kick_owed;		/* ... channels (bits) that owe one meanwhile */
	bool probe_armed;		/* rtx_timer is the tail-loss probe's */
	bool probe_sent;		/* probed since the last progress */
	bool probe_waited;		/* ... put off once, behind a transmission */
	/* timers.c: when each lazy timer's reason is due (ns), 0: none. */
	u64 rtx_due_ns;
	u64 ack_due_ns;
	struct usnic_rel_chan_conn chan[USNIC_REL_NR_CHANS];
	struct list_head win_node;	/* in ep->win_conns while windows have slots */
	/* timers.c: soft hrtimers, cancelled by usnic_rel_conn_shutdown(). */
	struct hrtimer rtx_timer;	/* tail-loss probe, then RTO */
	struct hrtimer reo_timer;	/* RACK: packets due within reordering */
	struct hrtimer ack_timer;
	struct work_struct tx_work;
};

int usnic_rel_conn_init(struct usnic_rel_peer *peer);
void usnic_rel_conn_shutdown(struct usnic_rel_peer *peer);
void usnic_rel_conn_free(struct usnic_rel_peer *peer);
void usnic_rel_conn_fail_all(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			     int status);
void usnic_rel_conn_dead(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			 bool stalled);
bool usnic_rel_conn_parked(const struct usnic_rel_conn *conn);
bool usnic_rel_conn_local_lost(const struct usnic_rel_conn *conn);
void usnic_rel_conn_complete(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			     unsigned int chan, u32 from, u32 count);

struct usnic_rel_txbuf *usnic_rel_txbuf_alloc(struct usnic_rel_ep *ep, u32 len,
					      gfp_t gfp);
void usnic_rel_txbuf_put(struct usnic_rel_ep *ep, struct usnic_rel_txbuf *b);
int usnic_rel_conn_tx_grow(struct usnic_rel_peer *peer, unsigned int chan);
int usnic_rel_conn_rx_grow(struct usnic_rel_peer *peer, unsigned int chan,
			   u32 seq);
void usnic_rel_win_reap(struct work_struct *work);

/* rdma.c: the one-sided state of a channel when the connection ends. */
void usnic_rel_rdma_fail_chan(struct usnic_rel_ep *ep,
			      struct usnic_rel_chan_conn *c, int status);
void usnic_rel_rdma_free_chan(struct usnic_rel_chan_conn *c);
bool usnic_rel_rdma_resp_pending(const struct usnic_rel_conn *conn);

/* handshake.c */
struct usnic_rel_pkt;
void usnic_rel_hs_new_epoch(struct usnic_rel_conn *conn);
void usnic_rel_hs_start(struct usnic_rel_peer *peer);
void usnic_rel_hs_rx_hello(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			   const struct usnic_rel_pkt *pkt, size_t len);
void usnic_rel_hs_rx_unverified(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer,
				const struct usnic_rel_pkt *pkt, size_t len);
void usnic_rel_hs_send(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer);

/* timers.c */
void usnic_rel_timers_init(struct usnic_rel_peer *peer);
void usnic_rel_rtx_timer_arm(struct usnic_rel_peer *peer, bool restart);
bool usnic_rel_probe_wait(struct usnic_rel_conn *conn, bool transmitting);
void usnic_rel_reo_timer_arm(struct usnic_rel_peer *peer);
bool usnic_rel_conn_other_overdue(const struct usnic_rel_conn *conn,
				  unsigned int chan);
void usnic_rel_ack_schedule(struct usnic_rel_peer *peer, unsigned int chan,
			    bool now);
void usnic_rel_tx_work_kick(struct usnic_rel_peer *peer);

/* receive.c */
u32 usnic_rel_rx_undelivered(const struct usnic_rel_chan_conn *c);

#endif /* _USNIC_REL_CONN_H */
