/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel tagged messaging: state shared by the files of lib/msg/.
 *
 * Wire (after the active-message header, little-endian):
 *   EAGER  tag, sreq, then the bytes     (tiny on the command channel, eager on data)
 *   RTS    tag, sreq, length, rkey       (rendezvous: the receiver reads by RDMA get)
 *   SACK   sreq                          (a synchronous eager send matched)
 *   FIN    sreq, status                  (the receiver finished its gets)
 *   PING   0                             (keepalive: draws the peer's ACK, so
 *                                         a dead peer is found by the kernel)
 *   CTS    sreq, rid, want               (piecewise rendezvous: send windows)
 *   WIN    rid, offset, length, rkey, status  (one registered window, or the
 *                                         sender's failure: then no FIN)
 *   WDONE  sreq, offset                  (the window at offset was read)
 * EAGER and RTS carry the per-peer message sequence in the header's seq:
 * the two channels are each in order but not with each other, so the
 * receiver holds early arrivals until their turn and matches in send order.
 * The sync flag rides in the header, not in the match bits, so a receive's
 * ignore mask never has to cover it.
 */
#ifndef UREL_MSG_MSG_H
#define UREL_MSG_MSG_H

#include <errno.h>
#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <usnicrel_msg.h>

#include "../am.h"
#include "../waker.h"
#include "lock.h"
#include "match.h"
#include "standback.h"

enum {
	UREL_MSG_OP_EAGER = 1,
	UREL_MSG_OP_RTS,
	UREL_MSG_OP_SACK,
	UREL_MSG_OP_FIN,
	UREL_MSG_OP_PING,
	UREL_MSG_OP_SELF, /* never on the wire: a send to ourselves, bytes still the sender's */
	UREL_MSG_OP_CTS,
	UREL_MSG_OP_WIN,
	UREL_MSG_OP_WDONE
};
#define UREL_MSG_F_SYNC (1U << 0)
/* RTS: nothing registered yet (rkey 0); the receiver asks for windows (CTS). */
#define UREL_MSG_F_WIN (1U << 1)

#define UREL_MSG_EAGER_HDR (sizeof(struct urel_am_hdr) + 16)
#define UREL_MSG_RTS_HDR (sizeof(struct urel_am_hdr) + 32)
#define UREL_MSG_HDR_MAX UREL_MSG_RTS_HDR

/* Early arrivals a peer may have us hold before its messages count as garbage. */
#define UREL_MSG_OOO_WINDOW (1U << 20)

/* A message that arrived ahead of its turn, header and bytes copied. */
struct urel_msg_early {
	struct urel_msg_early *next;
	struct urel_am_hdr h;
	uint64_t imm; /* the sender's immediate data */
	size_t len;
	unsigned char data[];
};

struct urel_msg_peer {
	uint32_t tx_seq; /* sequence of our next EAGER or RTS */
	uint32_t rx_next; /* sequence the next matched message must carry */
	struct urel_msg_early *early; /* ascending distance from rx_next */
	uint32_t posted; /* receives naming this peer still posted */
	int err; /* sticky: the peer failed (dead, restarted or removed) */
};

/*
 * The context of every send the layer posts: its completion reports a
 * message the peer never acknowledged. Outlives the context while the core
 * still holds sends that point to it.
 */
struct urel_msg_sink {
	struct urel_request r; /* first: the core hands it back */
	struct urel_msg *m; /* NULL once closed; under urel_msg_sink_lock */
	unsigned long refs; /* atomic: the context's own, plus one per send in flight */
};

/* A message nobody has matched yet; after a matched probe, its handle. */
struct urel_msg_handle {
	struct urel_match_entry e; /* first: the engine hands entries back */
	struct urel_msg *m;
	urel_peer_t peer;
	uint8_t op, flags;
	bool acked; /* SACK already sent (claimed by a matched probe) */
	uint64_t sreq, len, rkey;
	uint64_t imm; /* the sender's immediate data */
	unsigned char *data; /* EAGER: a copy of the bytes */
	struct urel_msg_req *self; /* SELF: the send, whose buffer holds the bytes */
};

/* A registered window of a piecewise rendezvous (sender) or its reads (receiver). */
struct urel_msg_win {
	struct urel_mr *mr; /* sender only */
	uint64_t rkey; /* receiver only */
	size_t off, len;
	size_t got; /* receiver: bytes landed */
	bool used; /* receiver */
};

enum {
	UREL_MSG_REQ_SEND = 1,
	UREL_MSG_REQ_RECV
};

struct urel_msg_req {
	struct urel_match_entry e; /* first: a posted receive */
	struct urel_msg *m;
	struct urel_msg_req *next, *prev; /* sends awaiting SACK/FIN, receives reading */
	uint8_t kind;
	bool done;
	bool listed;
	/*
	 * Some field from rndv on was written (a rendezvous send or receive,
	 * a send to ourselves): its reuse must clear them too. A tiny or eager
	 * message leaves them zero, so that its reuse clears only the fields
	 * before rndv (urel_msg_req_alloc()).
	 */
	bool tail_used;
	struct urel_msg_status st;
	/* send */
	uint64_t id;
	urel_peer_t peer;
	/* receive; a send to ourselves keeps its bytes in buf */
	void *buf;
	size_t cap;
	/* Rendezvous only, from here on: see tail_used. */
	bool rndv; /* send: completes on FIN */
	bool windowed; /* piecewise rendezvous (send or receive) */
	bool cts; /* send: the receiver asked for windows */
	bool pin_wait; /* send: waits for pinned memory to be released */
	bool nofin; /* receive: the sender failed and expects no FIN */
	bool need_cts; /* receive: the request for windows is still to be sent */
	struct urel_msg_win win[2];
	const void *sbuf; /* send: the bytes */
	size_t swant, reg_pos; /* send: bytes the receiver reads, registered so far */
	uint64_t rid; /* the receive's id (send: as the receiver named it) */
	size_t wnext; /* receive: offset of the next window expected */
	struct urel_mr *mr; /* send */
	uint64_t sreq, rkey; /* receive */
	size_t want, posted, landed;
	unsigned int gets;
	int gerr;
	/* Last: a reuse keeps them (the request stays on the live list). */
	struct urel_msg_req *lnext, *lprev; /* every request of the context (live list) */
	struct urel_msg_req *rnext; /* on the context's reaped stack, then its spares */
};

/* A send the core could not take yet (queue or staging full), retried by progress. */
struct urel_msg_pending {
	struct urel_msg_pending *next;
	urel_peer_t peer;
	unsigned int chan;
	size_t hlen;
	unsigned char hdr[UREL_MSG_HDR_MAX];
	const void *data;
	size_t dlen;
	uint64_t imm;
	struct urel_msg_req *done_req; /* completes once posted */
};

/* Oldest first: reads are served, and answers found, in the order they began. */
struct urel_msg_list {
	struct urel_msg_req *head, *tail;
};

struct urel_msg {
	struct urel_ep *ep;
	struct urel_device *dev;
	struct urel_am *am;
	struct urel_msg_attr attr;
	struct urel_msg_lock lock; /* everything below */
	struct urel_match match;
	struct urel_msg_peer **peers; /* by handle, grown on demand */
	uint32_t npeers;
	struct urel_msg_list waiting; /* sends awaiting SACK or FIN */
	struct urel_msg_list reading; /* rendezvous receives with gets to post or finish */
	struct urel_msg_pending *pend, *pend_tail;
	uint64_t next_id;
	uint64_t dropped; /* malformed or unexpected protocol messages */
	struct urel_msg_sink *sink;
	struct urel_msg_req *live; /* every request not freed (close frees them) */
	/*
	 * Reaped requests, pushed without the lock (atomic), still on the live
	 * list: the next allocation under the lock keeps a few as spares (and
	 * unlinks and frees the rest), so a request costs no allocation, its
	 * reap no lock round trip and its reuse no trip off and on the list.
	 */
	struct urel_msg_req *reaped;
	struct urel_msg_req *spare; /* linked by rnext, still on the live list */
	unsigned int nspare;
	/*
	 * Reaped requests kept for reuse: 0 frees each at its reap, so that
	 * a memory checker sees a use after completion (urel_msg_req_release()).
	 */
	unsigned int spare_max;
	pthread_t thread; /* the progress thread, if attr.progress_thread == 1 */
	bool stop; /* atomic: the progress thread ends */
	unsigned int gets; /* RDMA gets in flight, all receives */
	uint64_t last_ping_ms; /* keepalives last sent */
	int fail_err; /* the error urel_msg_fail_recvs() hands out */
	uint64_t peers_failed;
	uint64_t keepalives;
	uint64_t unexp_bytes, unexp_peak; /* eager bytes held as unexpected */
	uint64_t early, early_bytes; /* held early arrivals */
	uint64_t deferred; /* arrivals put back for lack of memory */
	bool early_stalled; /* a due early arrival waits for memory */
	size_t rndv_win; /* larger sends are registered piecewise (SIZE_MAX: never) */
	unsigned long pinned; /* windows registered, all of matched messages; read atomic */
	unsigned long pin_waiters; /* sends waiting for one to be released; read atomic */
	unsigned long pin_seen; /* the process's release generation waiters last tried at */
	bool pin_retry; /* one was released: waiters try again */
	bool pin_again; /* atomic: an allocation failed, progress retries */
	struct urel_msg *pins_next; /* the process's contexts (pins.c) */
	/* piecewise rendezvous, for urel_msg_rndv_stats() */
	uint64_t win_count, win_bytes; /* windows registered, bytes in them */
	uint64_t pin_waits; /* sends that began waiting to register a window */
	uint64_t pin_failures; /* sends failed: nothing pinned anywhere to wait for */
	struct urel_waker waker; /* blocking calls asleep on the device (sleepers under lock) */
	/*
	 * Progress passes of the application's threads, never of a progress
	 * thread (atomic): while they move, a progress thread stands back
	 * (urel_msg_bg_stand_back()).
	 */
	uint64_t app_polls;
	/*
	 * A progress thread asleep on the device is woken by the application's
	 * first pass after it went to sleep (urel_msg_bg_sleep()): bg_fd an
	 * eventfd (-1: none, it sleeps until an arrival), bg_armed (atomic) set
	 * while one sleeps unwoken, bg_parked (atomic) how many sleep.
	 */
	int bg_fd;
	uint32_t bg_armed, bg_parked;
	uint32_t standback_us; /* UREL_PROGRESS_STANDBACK_US; 0: never stand back */
	uint64_t standbacks; /* of this context's progress thread (atomic) */
	/*
	 * Requests completed so far (atomic, only grows; urel_msg_completions()):
	 * a poller that tested its requests after reading it tests none again
	 * while it stays the same.
	 */
	uint64_t completed;
};

/* struct urel_msg_stats up to LIBUSNICREL_0.8 (stats.c). */
struct urel_msg_stats_v08 {
	uint64_t unexpected, unexpected_bytes, unexpected_peak_bytes;
	uint64_t early, early_bytes;
	uint64_t dropped, peers_failed, keepalives, deferred;
	uint64_t late_wakeups;
};

/* struct urel_msg_stats up to LIBUSNICREL_0.7 (ctx.c). */
struct urel_msg_stats_v02 {
	uint64_t unexpected, unexpected_bytes, unexpected_peak_bytes;
	uint64_t early, early_bytes;
	uint64_t dropped, peers_failed, keepalives, deferred;
};

/* ctx.c */
struct urel_msg_peer *urel_msg_peer_add(struct urel_msg *m, urel_peer_t peer);

/* The state of @peer, created on first use (NULL: no memory, or peer 0). Under m->lock. */
static inline struct urel_msg_peer *urel_msg_peer(struct urel_msg *m, urel_peer_t peer)
{
	/* Every message looks its peer up: inline when it is known already. */
	if (peer < m->npeers && m->peers[peer])
		return m->peers[peer];
	return urel_msg_peer_add(m, peer);
}

int urel_msg_post_now(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		      size_t hlen, const void *data, size_t dlen, uint64_t imm);
int urel_msg_post(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		  size_t hlen, const void *data, size_t dlen, struct urel_msg_req *done_req);
int urel_msg_post_imm(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		      size_t hlen, const void *data, size_t dlen, uint64_t imm,
		      struct urel_msg_req *done_req);
int urel_msg_post_to(struct urel_msg *m, struct urel_msg_peer *pp, urel_peer_t peer,
		     unsigned int chan, const void *hdr, size_t hlen, const void *data, size_t dlen,
		     uint64_t imm, struct urel_msg_req *done_req);
void urel_msg_list_add(struct urel_msg_list *l, struct urel_msg_req *r);
void urel_msg_list_del(struct urel_msg_list *l, struct urel_msg_req *r);
void urel_msg_wake(struct urel_msg *m);
void urel_msg_req_link(struct urel_msg *m, struct urel_msg_req *r);
void urel_msg_req_unlink(struct urel_msg *m, struct urel_msg_req *r);
void urel_msg_req_forget(struct urel_msg *m, struct urel_msg_req *r);
struct urel_msg_req *urel_msg_req_alloc(struct urel_msg *m);
void urel_msg_req_release(struct urel_msg *m, struct urel_msg_req *r);
int urel_msg_block(struct urel_msg *m, bool (*ready)(void *), void *arg);
int urel_msg_pass(struct urel_msg *m, bool help);
void urel_msg_peer_failed(struct urel_msg *m, urel_peer_t peer, int err);
/* The core had no room for it now: a send that may wait is queued, not failed. */
static inline bool urel_msg_full(int ret)
{
	return ret == -EAGAIN || ret == -ENOBUFS;
}

bool urel_msg_peer_fatal(int err);
int urel_msg_drain(struct urel_msg *m);
void urel_msg_sink_get(struct urel_msg_sink *s);
void urel_msg_sink_put(struct urel_msg_sink *s);
struct urel_msg *urel_msg_sink_enter(struct urel_msg_sink *s);
void urel_msg_sink_leave(struct urel_msg_sink *s);

/* send.c */
void urel_msg_send_done(struct urel_msg_req *r, int status);
void urel_msg_on_sack(struct urel_msg *m, urel_peer_t peer, uint64_t sreq);
void urel_msg_on_fin(struct urel_msg *m, urel_peer_t peer, uint64_t sreq, int status);
int urel_msg_send_ctl(struct urel_msg *m, urel_peer_t peer, unsigned int op, uint64_t sreq,
		      int status);
void urel_msg_fail_sends(struct urel_msg *m, urel_peer_t peer, int err);

/* window.c */
int urel_msg_window_size(size_t *win);
void urel_msg_win_release(struct urel_msg *m, struct urel_msg_req *r);
void urel_msg_win_retry(struct urel_msg *m);
void urel_msg_on_cts(struct urel_msg *m, urel_peer_t peer, uint64_t sreq, uint64_t rid,
		     uint64_t want);
void urel_msg_on_wdone(struct urel_msg *m, urel_peer_t peer, uint64_t sreq, uint64_t off);

/* pins.c: the process's budget of windows */
void urel_msg_pins_join(struct urel_msg *m);
void urel_msg_pins_leave(struct urel_msg *m);
void urel_msg_pins_take(struct urel_msg *m, size_t len);
void urel_msg_pins_drop(struct urel_msg *m, size_t len);
unsigned long urel_msg_pins_gen(void);
unsigned long urel_msg_pins_held(void);
void urel_msg_pins_usage(uint64_t *bytes, uint64_t *peak);
void urel_msg_pins_help(struct urel_msg *m);

/* recv.c */
int urel_msg_on_am(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
		   const void *payload, size_t len);
void urel_msg_pump(struct urel_msg *m);
void urel_msg_release_early(struct urel_msg *m, urel_peer_t peer, struct urel_msg_peer *pp);
void urel_msg_free_recvs(struct urel_msg *m);
void urel_msg_posted_gone(struct urel_msg *m, uint32_t src);
void urel_msg_deliver(struct urel_msg *m, struct urel_msg_req *r, const struct urel_msg_handle *u,
		      const void *data);
void urel_msg_unexpected(struct urel_msg *m, struct urel_msg_handle *q);

/* self.c */
int urel_msg_self_send(struct urel_msg *m, struct urel_msg_req *r, const void *buf, size_t len,
		       uint64_t tag, bool sync);
void urel_msg_self_claim(struct urel_msg *m, struct urel_msg_handle *u);
void urel_msg_fail_recvs(struct urel_msg *m, urel_peer_t peer, int err);

/*
 * The application made a pass or begins a wait: counted for the progress
 * threads (urel_msg_bg_stand_back()); only whether the count moves
 * matters, so two threads' racing increments may lose one; no locked
 * instruction in the poll loop. A progress thread asleep on the device
 * leaves it (once per sleep).
 */
static inline void urel_msg_count_pass(struct urel_msg *m)
{
	__atomic_store_n(&m->app_polls, __atomic_load_n(&m->app_polls, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	if (__atomic_load_n(&m->bg_armed, __ATOMIC_RELAXED))
		urel_msg_bg_kick(m);
}

/* A progress pass of the application's (urel_msg_pass()), counted. Inline: every loop calls it. */
static inline int urel_msg_progress_one(struct urel_msg *m, bool help)
{
	urel_msg_count_pass(m);
	return urel_msg_pass(m, help);
}

/* Wire integers are little-endian; every message reads or writes several: inline. */
static inline void urel_msg_put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t urel_msg_get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/*
 * Released: urel_msg_test() reads done without the lock, then the status.
 * The count moves after done (released, an atomic add so that no reader
 * misses a racing one): whoever reads the count, acquiring, then tests a
 * request sees it done if it was done when the count was read.
 * Under m->lock. Inline: twice per message, and a sleeper to wake is rare.
 */
static inline void urel_msg_complete(struct urel_msg_req *r)
{
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	__atomic_fetch_add(&r->m->completed, 1, __ATOMIC_RELEASE);
	if (r->m->waker.sleepers)
		urel_msg_wake(r->m);
}

#endif /* UREL_MSG_MSG_H */
