/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel internal declarations shared by the module's files.
 *
 * Lifetime and locking, outermost first:
 *   ctx->lock (mutex)      endpoint create/destroy, AV and MR changes, poll.
 *   ep->tx_lock (mutex)    consuming the send rings and transmitting; ep->dead.
 *   ep->rx_lock (spin, BH) consuming the free-buffer ring, producing the CQ.
 * The one exception to transmitting under tx_lock: a one-packet answer to a
 * one-sided request leaves from the receive softirq when nothing is owed
 * ahead of it (rdma.c, usnic_rel_rdma_resp_inline()); what it touches is
 * guarded by conn->lock and peer->route.lock instead.
 * An endpoint is found in ctx->eps under RCU and pinned with ep->ref; each
 * mmap of one of its regions holds a reference too, so its rings outlive
 * DESTROY_EP until munmap. The receive path (encap_rcv, softirq) finds the
 * endpoint through sk_user_data under RCU; destroy clears it, releases the
 * socket and waits for a grace period before dropping its reference, with
 * ctx->lock dropped (one grace period for all when the file closes).
 * Peers are read under RCU on the receive path; AV_REMOVE frees one after a
 * grace period from a work item (peer.c), never waiting for it.
 */
#ifndef _USNIC_REL_H
#define _USNIC_REL_H

#include <linux/types.h>
#include <linux/dcache.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/hashtable.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>
#include <net/dst.h>

#include "../../include/uapi/usnic_rel.h"
#include "conn.h"
#include "counters.h"
#include "fault.h"

/* Module parameters (main.c); validated once at load time. */
extern unsigned int usnic_rel_send_window;
extern unsigned int usnic_rel_initial_cwnd;
extern unsigned int usnic_rel_cwnd_min;
extern unsigned int usnic_rel_cwnd_queue_pct;
extern unsigned int usnic_rel_cmd_mtu;
extern unsigned int usnic_rel_rto_min_us;
extern unsigned int usnic_rel_rto_max_us;
extern unsigned int usnic_rel_ack_delay_us;
extern unsigned int usnic_rel_ack_every;
extern unsigned int usnic_rel_retry_limit;
extern unsigned int usnic_rel_max_eps_per_user;
extern unsigned int usnic_rel_max_rx_held_kb_per_user;
extern unsigned int usnic_rel_stall_timeout_ms;
extern unsigned int usnic_rel_probe_min_us;

/* Deferred work that may sleep and must finish before the module goes. */
extern struct workqueue_struct *usnic_rel_wq;

/* Root of /sys/kernel/debug/usnic_rel, or an error pointer when debugfs is off. */
extern struct dentry *usnic_rel_debugfs_root;

/* An open file of /dev/usnic_rel. */
struct usnic_rel_ctx {
	struct mutex lock;		/* see the locking rules above */
	struct xarray eps;		/* ep_id -> struct usnic_rel_ep */
	struct xarray mrs;		/* low 32 bits of rkey -> struct usnic_rel_mr */
	u64 ep_serial;			/* last endpoint serial given (lock) */
	unsigned int nr_eps;		/* in @eps, against RLIMIT_NOFILE (lock) */
	wait_queue_head_t wq;		/* woken when a CQE is posted */
	struct net *net;		/* netns of the opener, referenced */
};

/*
 * A CQE was posted: wake the file's pollers. A reader that polls the CQ and
 * never sleeps costs no wait queue lock, which all endpoints of the file
 * share: the full barrier in wq_has_sleeper() orders the CQE's tail store
 * before the look at the queue, against the one after poll_wait() in
 * usnic_rel_poll(), so either we see the sleeper or it sees the tail.
 */
static inline void usnic_rel_ctx_wake(struct usnic_rel_ctx *ctx)
{
	if (wq_has_sleeper(&ctx->wq))
		wake_up_interruptible(&ctx->wq);
}

/* The kernel's view of one shared ring: its own index lives here only. */
struct usnic_rel_ring {
	void *mem;			/* vmalloc_user: header then entries */
	struct usnic_rel_ring_hdr *hdr;
	void *desc;
	u32 entries;			/* power of two */
	u32 entry_size;
	u32 size;			/* bytes mapped */
	u32 kidx;			/* head (we consume) or tail (we produce) */
	bool corrupt;			/* user index was impossible: stopped */
};

enum usnic_rel_counter {
	USNIC_REL_CNT_TX_PACKETS,
	USNIC_REL_CNT_TX_BYTES,
	USNIC_REL_CNT_TX_ERRORS,
	USNIC_REL_CNT_RX_PACKETS,
	USNIC_REL_CNT_RX_BYTES,
	USNIC_REL_CNT_RX_NO_BUF,
	USNIC_REL_CNT_RX_BAD_HEADER,
	USNIC_REL_CNT_RX_UNKNOWN_PEER,
	USNIC_REL_CNT_RX_CQ_FULL,
	USNIC_REL_CNT_RING_CORRUPT,
	USNIC_REL_CNT_BAD_SQE,
	USNIC_REL_CNT_RX_MESSAGES,
	USNIC_REL_CNT_RX_TOO_BIG,
	USNIC_REL_CNT_RX_NO_MEMORY,
	USNIC_REL_CNT_RX_UNSUPPORTED,
	USNIC_REL_CNT_RX_OUT_OF_ORDER,
	USNIC_REL_CNT_RX_DUPLICATE,
	USNIC_REL_CNT_RX_OUT_OF_WINDOW,
	USNIC_REL_CNT_RX_STALE,
	USNIC_REL_CNT_RX_DEAD_PEER,
	USNIC_REL_CNT_RX_BAD_ACK,
	USNIC_REL_CNT_TX_DATA_PACKETS,
	USNIC_REL_CNT_ACKS_STANDALONE,
	USNIC_REL_CNT_ACKS_PIGGYBACKED,
	USNIC_REL_CNT_ACKS_DELAYED,
	USNIC_REL_CNT_RETX_TIMEOUT,
	USNIC_REL_CNT_RETX_FAST,
	USNIC_REL_CNT_PEERS_DEAD,
	USNIC_REL_CNT_PEER_RESETS,
	USNIC_REL_CNT_RX_UNVERIFIED,	/* from an incarnation not paired with us */
	USNIC_REL_CNT_CHALLENGES_SENT,	/* HELLOs sent to ask for proof */
	USNIC_REL_CNT_CHALLENGES_LIMITED, /* ... not sent: rate or size limit */
	USNIC_REL_CNT_HELLOS_SENT,	/* every HELLO sent */
	USNIC_REL_CNT_HANDSHAKES,	/* pairings with a verified peer */
	USNIC_REL_CNT_PEERS_STALLED,	/* declared dead by stall_timeout_ms */
	USNIC_REL_CNT_RDMA_STARTED,	/* one-sided ops this endpoint started */
	USNIC_REL_CNT_RDMA_FAILED,	/* ... that completed with an error */
	USNIC_REL_CNT_RDMA_SERVED,	/* ops executed here for a peer */
	USNIC_REL_CNT_RDMA_BAD_RKEY,	/* refused here: no such rkey */
	USNIC_REL_CNT_RDMA_REFUSED,	/* refused here: bounds, rights, alignment */
	USNIC_REL_CNT_RDMA_BUSY,	/* requests deferred: responder queue full */
	USNIC_REL_CNT_RETX_PROBE,	/* tail-loss probes sent */
	USNIC_REL_CNT_RX_HOLD_FULL,	/* not held: the endpoint holds too much */
	USNIC_REL_CNT_RX_HOLD_USER_FULL, /* not held: the owner's endpoints hold too much */
	USNIC_REL_CNT_TX_GSO_RUNS,	/* runs of packets sent by one GSO call */
	USNIC_REL_CNT_RX_MSG_ABORTED,	/* a new message began before the last ended */
	USNIC_REL_CNT_TX_PARKED,	/* sends parked on their peer (window, memory) */
	USNIC_REL_CNT_RDMA_LOCKED_OUT,	/* refused: the peer guessed too many rkeys */
	USNIC_REL_CNT_TX_WIN_GROW,	/* a send window got more slots */
	USNIC_REL_CNT_RX_WIN_GROW,	/* a receive window got more slots */
	USNIC_REL_CNT_WIN_NO_MEMORY,	/* a window could not grow: not sent or not held */
	USNIC_REL_CNT_TX_MSG_TOO_BIG,	/* sends failed: longer than the peer receives */
	USNIC_REL_CNT_TX_REFUSED_TOO_BIG, /* TOO_BIG refusals the peer sent us */
	USNIC_REL_CNT_CWND_FAST_RECOVERIES, /* congestion episodes found by ACKs */
	USNIC_REL_CNT_CWND_TIMEOUTS,	/* ... by the timer: cwnd back to 1 */
	USNIC_REL_CNT_RNR_ACKS_SENT,	/* we dropped in order for want of buffers */
	USNIC_REL_CNT_RNR_ACKS_RECEIVED, /* ... the peer did: not congestion */
	USNIC_REL_CNT_RX_BAD_VERSION,	/* of rx_bad_header: another wire version */
	USNIC_REL_CNT_TX_LOCAL_RESENDS,	/* never left the host: resent early */
	USNIC_REL_CNT_TX_GSO_FALLBACKS,	/* GSO runs sent packet by packet */
	USNIC_REL_CNT_RETX_SPURIOUS,	/* resends answered by their original */
	USNIC_REL_CNT_RDMA_RESP_INLINE,	/* answers sent from the receive softirq */
	USNIC_REL_CNT_RDMA_RESP_DEFERRED, /* ... sent by the connection's work item */
	USNIC_REL_CNT_TX_WORK_RUNS,	/* runs of the connections' work items */
	USNIC_REL_CNT_ACKS_INLINE,	/* of acks_standalone: sent from softirq, no work item */
	USNIC_REL_CNT_TX_PACKED_MSGS,	/* messages sent packed several to a packet */
	USNIC_REL_CNT_RDMA_QUIET_DONE,	/* quiet PUTs completed by a later answer */
	USNIC_REL_CNT_RX_HELD_IN_ORDER,	/* in order, no buffer: held, not dropped */
	USNIC_REL_CNT_PERSIST_PROBES,	/* ACK requests to a peer holding our packets */
	USNIC_REL_CNT_CWND_LOSSES_SPARED, /* losses without queueing delay: no reduction */
	USNIC_REL_NR_COUNTERS
};

/*
 * An endpoint's counters, one set per CPU: every packet bumps several, and
 * one shared set would bounce its cache lines between the CPUs that send
 * and receive. Summed when read (counters.c).
 */
struct usnic_rel_pcpu_counters {
	u64_stats_t cnt[USNIC_REL_NR_COUNTERS];
	struct u64_stats_sync syncp;	/* 32-bit only: whole reads */
};

union usnic_rel_sockaddr {
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

/*
 * A peer's route (xmit.c): one cached dst. Most sends to a peer are
 * serialised by ep->tx_lock, but an answer may leave from the receive
 * softirq (rdma.c), so @lock (spin, BH), a leaf, guards every field.
 */
struct usnic_rel_route {
	spinlock_t lock;		/* every field below (BH) */
	struct dst_entry *dst;		/* held, or NULL: look it up */
	u32 cookie;			/* dst_check() cookie (IPv6) */
	u32 no_gso_mtu;			/* its MTU when it refused */
	bool no_gso;			/* this route refused UDP GSO */
	bool closed;			/* peer removed: cache nothing */
	union {				/* source address the lookup chose */
		__be32 saddr4;
		struct in6_addr saddr6;
	};
};

struct usnic_rel_peer {
	struct hlist_node node;		/* in ep->peer_hash, RCU */
	struct usnic_rel_ep *ep;
	u32 handle;
	union usnic_rel_sockaddr addr;
	struct usnic_rel_route route;	/* to @addr (xmit.c, route.lock) */
	u32 bad_rkeys;			/* unknown rkeys in a row (conn.lock) */
	struct rcu_work free_work;	/* AV_REMOVE frees it after a grace period */
	struct usnic_rel_conn conn;
};

/*
 * A send being cut into packets: the kernel's own copy of its SQE, checked
 * once. One per channel is taken from the ring into ep->sq_cur; a send that
 * cannot go out at once (its peer's window is full, memory is short, or
 * older sends to the same peer and channel wait) is parked on its peer's
 * channel (usnic_rel_chan_conn.sendq) in a copy of its own. Each holds the
 * CQ slot its SQE reserved, so the CQ size bounds how many exist.
 */
struct usnic_rel_sq_cur {
	struct list_head node;		/* in the peer's sendq while parked */
	bool active;			/* ep->sq_cur only: holds an SQE */
	u32 sent;			/* bytes already given a sequence number */
	u32 msg_id;
	u32 epoch;			/* conn->epoch when its first packet left */
	struct usnic_rel_rdma_op *op;	/* one-sided: its completion's record */
	struct usnic_rel_sqe sqe;
};

struct usnic_rel_ep {
	struct kref ref;
	struct rcu_head rcu;
	struct usnic_rel_ctx *ctx;
	u32 id;
	u32 debug_id;
	u64 serial;			/* never reused in its context: binds MRs */
	kuid_t owner;			/* charged for it (user.c), real uid */
	struct usnic_rel_user *user;	/* the owner's account, alive while we are */
	u32 incarnation;
	u16 family;
	u16 port;			/* bound port, host order */
	u32 mtu[USNIC_REL_NR_CHANS];	/* DATA payload bytes per packet */
	u32 max_msg[USNIC_REL_NR_CHANS];
	u32 rx_buf_size;

	struct mutex tx_lock;		/* send rings, socket use, dead */
	bool dead;			/* destroyed: no more sends (tx_lock) */
	struct socket *sock;		/* NULL once released (tx_lock) */
	struct sock __rcu *sk_rcu;	/* its sk for softirq senders; NULL before release */
	struct net *net;		/* ctx->net, referenced by the context */

	spinlock_t rx_lock;		/* free ring, CQ, cq_reserved */
	atomic_long_t rx_held_bytes;	/* truesize of the skbs held (receive.c) */
	u32 cq_reserved;		/* CQ slots promised to sends (rx_lock) */

	struct usnic_rel_ring sq[USNIC_REL_NR_CHANS];
	struct usnic_rel_sq_cur sq_cur[USNIC_REL_NR_CHANS];	/* tx_lock */
	bool sq_blocked;		/* ep->sq_cur waits: could not be parked */
	int tx_cpu;			/* CPU of the last doorbell, or -1 */
	struct delayed_work tx_retry;	/* sends that met an allocation failure */
	atomic_t conn_epochs;		/* source of usnic_rel_conn.epoch */
	struct usnic_rel_ring cq;
	struct usnic_rel_ring rx_free;
	void *rx_bufs;			/* vmalloc_user, rx_buf_count buffers */
	u32 rx_buf_count;
	u32 rx_bufs_size;
	void *staging;			/* vmalloc_user, user-written payloads */
	u32 staging_size;
	struct usnic_rel_pack *pack;	/* pack.c's scratch, at first use (tx_lock) */

	struct xarray peers;		/* handle -> peer; changes under ctx->lock */
	DECLARE_HASHTABLE(peer_hash, 8);	/* by address, RCU */

	spinlock_t win_lock;		/* win_conns; nests inside conn->lock */
	struct list_head win_conns;	/* connections whose windows have slots */
	struct delayed_work win_reap;	/* gives unused window slots back (conn.c) */
	atomic_long_t win_bytes;	/* slot arrays of all its windows */
	atomic_t win_tx_slots_max;	/* most slots a send window had */
	atomic_t win_rx_slots_max;	/* most slots a receive window had */
	atomic64_t win_shrinks;		/* windows that gave slots back (reaper) */
	atomic_long_t tx_bufs;		/* live packet copies (usnic_rel_txbuf) */
	atomic_long_t tx_buf_bytes;	/* and what they were allocated */

	struct usnic_rel_pcpu_counters __percpu *counters;
	struct dentry *debugfs;
	struct usnic_rel_ep_sysfs *sysfs;	/* counters.c */
	struct usnic_rel_fault fault;	/* fault.c */
};

/*
 * A memory registration. Peers reach it by rkey from softirq context: it is
 * found in ctx->mrs under RCU and pinned with @ref; the last reference
 * unpins the pages from a work item (that may sleep) and frees the
 * structure after a grace period. It serves one endpoint (@ep_serial).
 * Every access to the pages is counted in @access_cnt while it runs;
 * DEREG_MR sets its REVOKED bit and waits on @drained for the accesses
 * under way (mr_access.h, mr.c).
 */
struct usnic_rel_mr {
	refcount_t ref;
	struct rcu_head rcu;
	struct work_struct free_work;
	u64 addr;
	u64 length;
	u32 access;
	atomic_t access_cnt;		/* accesses running, | REVOKED */
	struct completion drained;	/* the last one once revoked */
	u64 rkey;
	u64 ep_serial;
	unsigned long npages;
	struct page **pages;
	struct mm_struct *mm;		/* charged via pinned_vm, mmgrab'd */
};

/*
 * Counted from process context, softirq and the timers alike. Preemption
 * off keeps us on this CPU's set, where a 64-bit add is one local op that
 * an interrupting softirq cannot split; on 32-bit the update is two words
 * under a seqcount, so interrupts stay off around it.
 */
static inline void usnic_rel_count(struct usnic_rel_ep *ep,
				   enum usnic_rel_counter c, u64 n)
{
	struct usnic_rel_pcpu_counters *pc = get_cpu_ptr(ep->counters);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&pc->syncp);
	u64_stats_add(&pc->cnt[c], n);
	u64_stats_update_end_irqrestore(&pc->syncp, flags);
	put_cpu_ptr(ep->counters);
}

int usnic_rel_chardev_init(void);
void usnic_rel_chardev_exit(void);

void usnic_rel_debugfs_init(void);
void usnic_rel_debugfs_exit(void);
void usnic_rel_debugfs_ep_add(struct usnic_rel_ep *ep);
void usnic_rel_debugfs_ep_remove(struct usnic_rel_ep *ep);

/* ep.c */
int usnic_rel_ep_create(struct usnic_rel_ctx *ctx,
			struct usnic_rel_create_ep *arg);
struct usnic_rel_ep *usnic_rel_ep_unlist(struct usnic_rel_ctx *ctx, u32 ep_id);
void usnic_rel_ep_teardown(struct usnic_rel_ep *ep);
void usnic_rel_ep_destroy_all(struct usnic_rel_ctx *ctx);
struct usnic_rel_ep *usnic_rel_ep_get(struct usnic_rel_ctx *ctx, u32 ep_id);
void usnic_rel_ep_put(struct usnic_rel_ep *ep);
int usnic_rel_ep_mmap(struct usnic_rel_ctx *ctx, struct vm_area_struct *vma);
bool usnic_rel_ep_readable(struct usnic_rel_ep *ep);

/* user.c */
struct usnic_rel_user;
int usnic_rel_user_get_ep(kuid_t uid, struct usnic_rel_user **user);
void usnic_rel_user_put_ep(kuid_t uid);
bool usnic_rel_user_hold(struct usnic_rel_user *user, unsigned int bytes);
void usnic_rel_user_unhold(struct usnic_rel_user *user, unsigned int bytes);

/* ring.c */
void *usnic_rel_vmalloc_user(size_t size);
int usnic_rel_ring_alloc(struct usnic_rel_ring *ring, u32 entries,
			 u32 entry_size);
void usnic_rel_ring_free(struct usnic_rel_ring *ring);
u32 usnic_rel_ring_avail(struct usnic_rel_ep *ep, struct usnic_rel_ring *ring);
u32 usnic_rel_cq_space(struct usnic_rel_ep *ep);
void usnic_rel_cq_post(struct usnic_rel_ep *ep, const struct usnic_rel_cqe *cqe);
void usnic_rel_cq_post_reserved(struct usnic_rel_ep *ep,
				const struct usnic_rel_cqe *cqe);

/* socket.c */
int usnic_rel_socket_open(struct usnic_rel_ep *ep,
			  const struct usnic_rel_addr *addr);
void usnic_rel_socket_close(struct usnic_rel_ep *ep);
u32 usnic_rel_socket_dev_mtu(struct net *net, const struct usnic_rel_addr *addr);

/* xmit.c */
void usnic_rel_route_clear(struct usnic_rel_route *r);
void usnic_rel_route_close(struct usnic_rel_route *r);
bool usnic_rel_route_gso(struct usnic_rel_route *r);
int usnic_rel_socket_send(struct usnic_rel_ep *ep, struct usnic_rel_route *r,
			  const union usnic_rel_sockaddr *to,
			  const void *buf, size_t len);
bool usnic_rel_socket_softirq_ok(struct usnic_rel_ep *ep);
int usnic_rel_socket_send_softirq(struct usnic_rel_ep *ep, struct sock *sk,
				  struct usnic_rel_route *r,
				  const union usnic_rel_sockaddr *to,
				  const void *buf, size_t len);
void usnic_rel_route_init(struct usnic_rel_route *r);
struct kvec;
int usnic_rel_socket_send_gso(struct usnic_rel_ep *ep,
			      struct usnic_rel_route *r,
			      const union usnic_rel_sockaddr *to,
			      const struct kvec *vec, unsigned int n, size_t len);

/* peer.c */
int usnic_rel_peer_cache_init(void);
void usnic_rel_peer_cache_exit(void);
int usnic_rel_av_insert(struct usnic_rel_ep *ep, struct usnic_rel_av_insert *arg);
int usnic_rel_av_remove(struct usnic_rel_ep *ep, u32 handle);
void usnic_rel_av_destroy(struct usnic_rel_ep *ep);
struct usnic_rel_peer *usnic_rel_peer_lookup_v4(struct usnic_rel_ep *ep,
						__be32 addr, __be16 port);
struct usnic_rel_peer *usnic_rel_peer_lookup_v6(struct usnic_rel_ep *ep,
						const struct in6_addr *addr,
						__be16 port);

/* mr.c */
struct usnic_rel_pkt;
int usnic_rel_mr_register(struct usnic_rel_ctx *ctx, struct usnic_rel_reg_mr *arg);
int usnic_rel_mr_deregister(struct usnic_rel_ctx *ctx, u64 rkey);
void usnic_rel_mr_destroy_all(struct usnic_rel_ctx *ctx);
struct usnic_rel_mr *usnic_rel_mr_lookup(struct usnic_rel_ep *ep, u64 rkey);
void usnic_rel_mr_put(struct usnic_rel_mr *mr, bool can_sleep);
int usnic_rel_mr_copy(struct usnic_rel_mr *mr, u64 offset, void *buf, u32 len,
		      bool to_mr);
int usnic_rel_mr_write_pkt(struct usnic_rel_mr *mr, u64 offset,
			   const struct sk_buff *skb,
			   const struct usnic_rel_pkt *pkt);
int usnic_rel_mr_atomic(struct usnic_rel_mr *mr, u64 offset, u8 op, u8 size,
			u64 operand, u64 compare, u64 *old);

/*
 * batch.c: a run of packets of one message for one peer, sent with one
 * UDP GSO call. UDP takes at most 64 segments and 64 KiB a call.
 */
#define USNIC_REL_BATCH_MAX	32
#define USNIC_REL_BATCH_BYTES	60000

struct usnic_rel_tx_batch {
	struct usnic_rel_txbuf *b[USNIC_REL_BATCH_MAX];
	unsigned int n;
	size_t bytes;
};

void usnic_rel_batch_add(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			 struct usnic_rel_tx_batch *batch,
			 struct usnic_rel_txbuf *b);
void usnic_rel_batch_flush(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			   struct usnic_rel_tx_batch *batch);

/* pack.c */
u32 usnic_rel_pack_send(struct usnic_rel_ep *ep, unsigned int chan,
			const struct usnic_rel_sqe *sqe);
u32 usnic_rel_pack_parked(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			  unsigned int chan);
void usnic_rel_pack_free(struct usnic_rel_ep *ep);

/* send.c */
int usnic_rel_sqe_check(struct usnic_rel_ep *ep, unsigned int chan,
			const struct usnic_rel_sqe *sqe);
bool usnic_rel_cq_reserve_spare(struct usnic_rel_ep *ep, u32 spare);
void usnic_rel_xmit_local_drop(struct usnic_rel_ep *ep,
			       struct usnic_rel_peer *peer,
			       const void *buf, size_t len, int err);
void usnic_rel_xmit(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
		    const void *buf, size_t len);
struct usnic_rel_txbuf;
void usnic_rel_xmit_softirq(struct usnic_rel_ep *ep, struct sock *sk,
			    struct usnic_rel_peer *peer,
			    struct usnic_rel_txbuf *b);
u8 usnic_rel_sqe_pkt_type(u8 opcode);
int usnic_rel_doorbell(struct usnic_rel_ep *ep, u32 rings);
void usnic_rel_conn_flush(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer);
void usnic_rel_send_final_acks(struct usnic_rel_ep *ep);
void usnic_rel_send_init(struct usnic_rel_ep *ep);
void usnic_rel_send_stop(struct usnic_rel_ep *ep);
void usnic_rel_send_retry_later(struct usnic_rel_ep *ep);
void usnic_rel_send_parked(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer);
void usnic_rel_send_parked_cancel(struct usnic_rel_ep *ep,
				  struct usnic_rel_peer *peer, int status);
void usnic_rel_send_parked_free(struct usnic_rel_chan_conn *c);
int usnic_rel_send_msg_status(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, unsigned int chan,
			      const struct usnic_rel_txbuf *b);
void usnic_rel_send_msg_refused(struct usnic_rel_ep *ep,
				struct usnic_rel_peer *peer, unsigned int chan,
				u32 msg_id);

/* ack.c */
struct usnic_rel_pkt;
void usnic_rel_ack_rx(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
		      const struct usnic_rel_pkt *pkt);
void usnic_rel_ack_fill(struct usnic_rel_peer *peer, unsigned int chan,
			struct usnic_rel_pkt *pkt);
void usnic_rel_pkt_init(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			struct usnic_rel_pkt *pkt, u8 type, unsigned int chan);
size_t usnic_rel_ack_build(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			   unsigned int chan, void *buf, size_t size);
size_t usnic_rel_ack_take_inline(struct usnic_rel_ep *ep,
				 struct usnic_rel_peer *peer,
				 unsigned long chans, void *buf, size_t size,
				 unsigned int *chan);
void usnic_rel_ack_xmit_softirq(struct usnic_rel_ep *ep, struct sock *sk,
				struct usnic_rel_peer *peer, unsigned int chan,
				const void *buf, size_t len);

/* rdma.c */
int usnic_rel_rdma_start(struct usnic_rel_ep *ep, struct usnic_rel_sq_cur *cur);
bool usnic_rel_rdma_finished(struct usnic_rel_sq_cur *cur);
void usnic_rel_rdma_cur_drop(struct usnic_rel_sq_cur *cur);
void usnic_rel_rdma_cur_unlink(struct usnic_rel_sq_cur *cur);
u32 usnic_rel_rdma_frag_max(struct usnic_rel_ep *ep, unsigned int chan, u8 type);
void usnic_rel_rdma_fill_request(struct usnic_rel_peer *peer, unsigned int chan,
				 struct usnic_rel_sq_cur *cur,
				 struct usnic_rel_pkt *pkt, u32 frag);
int usnic_rel_rdma_rx(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
		      const struct usnic_rel_pkt *pkt, const struct sk_buff *skb);
void usnic_rel_rdma_respond(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer);
struct usnic_rel_txbuf *usnic_rel_rdma_resp_inline(struct usnic_rel_ep *ep,
						   struct usnic_rel_peer *peer,
						   unsigned int chan);
int usnic_rel_rdma_refuse_msg(struct usnic_rel_ep *ep,
			      struct usnic_rel_peer *peer, unsigned int chan,
			      u32 msg_id);

/* receive.c */
int usnic_rel_udp_recv(struct sock *sk, struct sk_buff *skb);
void usnic_rel_rx_backlog(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer);
void usnic_rel_rx_backlog_all(struct usnic_rel_ep *ep);
void usnic_rel_rx_copy(const struct sk_buff *skb,
		       const struct usnic_rel_pkt *pkt, u32 off, void *to,
		       u32 len);
void usnic_rel_rx_msg_abort(struct usnic_rel_ep *ep, struct usnic_rel_peer *peer,
			    unsigned int chan, int status);

#endif /* _USNIC_REL_H */
