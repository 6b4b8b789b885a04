// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: the receiver. Messages are taken in each
 * sender's order, matched against the posted receives, and otherwise kept
 * as unexpected (an eager message's bytes copied once; a rendezvous message
 * keeps only its request-to-send, so its bytes move once, by RDMA get,
 * into the buffer of the receive that finally matches it). A message its
 * sender registers piecewise is read a window at a time, as the sender
 * announces them (window.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "msg.h"

/* One RDMA get of a rendezvous receive, the core's request as context. */
struct urel_msg_get {
	struct urel_request r;
	struct urel_msg_req *req;
	struct urel_msg_sink *sink; /* the context may close before the get ends */
	int slot; /* the window it reads, -1: the message is registered whole */
};

static uint32_t urel_msg_src(urel_peer_t peer)
{
	return peer == UREL_MSG_ANY_PEER ? UREL_MATCH_ANY_SRC : peer;
}

/* The sticky failure of @peer, 0 while it is alive. Under m->lock. */
static int urel_msg_peer_err(const struct urel_msg *m, urel_peer_t peer)
{
	return peer && peer < m->npeers && m->peers[peer] ? m->peers[peer]->err : 0;
}

/* The receiver is done reading: tell the sender (if it lives), complete. Under m->lock. */
static void urel_msg_rndv_finish(struct urel_msg *m, struct urel_msg_req *r)
{
	urel_msg_list_del(&m->reading, r);
	r->st.received = r->landed;
	if (r->gerr)
		r->st.error = r->gerr;
	if (!r->nofin && !urel_msg_peer_err(m, r->st.peer) &&
	    urel_msg_send_ctl(m, r->st.peer, UREL_MSG_OP_FIN, r->sreq, r->st.error))
		m->dropped++;
	urel_msg_complete(r);
}

/* Piecewise reads: the window at @off was read whole; its sender unpins it. */
static int urel_msg_send_wdone(struct urel_msg *m, struct urel_msg_req *r, uint64_t off)
{
	unsigned char hdr[sizeof(struct urel_am_hdr) + 16];
	struct urel_am_hdr h = urel_am_hdr(UREL_AM_MSG, UREL_MSG_OP_WDONE, 0, 0);

	memcpy(hdr, &h, sizeof(h));
	urel_msg_put64(hdr + sizeof(h), r->sreq);
	urel_msg_put64(hdr + sizeof(h) + 8, off);
	return urel_msg_post(m, r->st.peer, UREL_CHAN_CMD, hdr, sizeof(hdr), NULL, 0, NULL);
}

static int urel_msg_send_cts(struct urel_msg *m, struct urel_msg_req *r);

/*
 * Send what a piecewise read owes its sender: the request for windows, and
 * the release of each window read whole (the last is released by the FIN).
 * One that could not be queued for lack of memory waits for the next
 * progress pass. Under m->lock.
 */
static void urel_msg_win_owed(struct urel_msg *m, struct urel_msg_req *r)
{
	int ret;

	if (r->gerr || urel_msg_peer_err(m, r->st.peer))
		return;
	if (r->need_cts) {
		ret = urel_msg_send_cts(m, r);
		if (ret == -ENOMEM)
			return;
		r->need_cts = false;
		if (ret) {
			r->gerr = ret;
			return;
		}
	}
	for (int i = 0; i < 2; i++) {
		struct urel_msg_win *w = &r->win[i];

		if (!w->used || w->got < w->len)
			continue;
		if (w->off + w->len < r->want) {
			ret = urel_msg_send_wdone(m, r, w->off);
			if (ret == -ENOMEM)
				continue;
			if (ret) {
				r->gerr = ret;
				return;
			}
		}
		*w = (struct urel_msg_win){ 0 };
	}
}

static void urel_msg_get_done(struct urel_request *cr, const struct urel_completion *c)
{
	struct urel_msg_get *g = (struct urel_msg_get *)cr;
	struct urel_msg_sink *s = g->sink;
	struct urel_msg_req *r = g->req;
	int g_slot = g->slot;
	struct urel_msg *m;

	free(g);
	m = urel_msg_sink_enter(s);
	if (!m) {
		/* The context closed with this read out and left its request to us. */
		if (!--r->gets)
			free(r);
		urel_msg_sink_leave(s);
		return;
	}
	urel_msg_lock(&m->lock);
	r->gets--;
	m->gets--;
	if (c->status && !r->gerr)
		r->gerr = c->status;
	else if (!c->status)
		r->landed += c->len;
	if (!c->status && g_slot >= 0) {
		r->win[g_slot].got += c->len;
		urel_msg_win_owed(m, r);
	}
	if (urel_msg_peer_fatal(c->status))
		urel_msg_peer_failed(m, r->st.peer, c->status);
	if (r->listed && !r->gets && (r->gerr || r->landed == r->want))
		urel_msg_rndv_finish(m, r);
	urel_msg_unlock(&m->lock);
	urel_msg_sink_leave(s);
}

/* The window of @r holding offset @pos, -1 when not announced yet. */
static int urel_msg_win_slot(const struct urel_msg_req *r, size_t pos)
{
	for (int i = 0; i < 2; i++) {
		if (r->win[i].used && r->win[i].off <= pos && pos - r->win[i].off < r->win[i].len)
			return i;
	}
	return -1;
}

/* Post the gets the core has room for; under m->lock. */
static void urel_msg_rndv_post(struct urel_msg *m, struct urel_msg_req *r)
{
	if (r->windowed)
		urel_msg_win_owed(m, r);
	while (!r->gerr && r->posted < r->want) {
		size_t n = r->want - r->posted;
		uint64_t rkey = r->rkey, roff = r->posted;
		struct urel_msg_get *g;
		int slot = -1, ret;

		if (r->windowed) {
			slot = urel_msg_win_slot(r, r->posted);
			if (slot < 0)
				break; /* the sender announces the next window */
			rkey = r->win[slot].rkey;
			roff = r->posted - r->win[slot].off;
			if (n > r->win[slot].len - roff)
				n = r->win[slot].len - roff;
		}
		if (n > m->attr.rndv_chunk)
			n = m->attr.rndv_chunk;
		g = malloc(sizeof(*g));
		if (!g)
			return; /* retried by progress */
		g->r.complete = urel_msg_get_done;
		g->r.user = NULL;
		g->req = r;
		g->sink = m->sink;
		g->slot = slot;
		urel_msg_sink_get(m->sink);
		ret = urel_ep_get(m->ep, r->st.peer, (char *)r->buf + r->posted, n, rkey, roff,
				  &g->r, 0);
		if (ret) {
			urel_msg_sink_put(m->sink);
			free(g);
			if (ret == -EAGAIN || ret == -ENOBUFS)
				return;
			r->gerr = ret;
			break;
		}
		r->posted += n;
		r->gets++;
		m->gets++;
	}
	if (!r->gets && (r->gerr || r->landed == r->want))
		urel_msg_rndv_finish(m, r);
}

void urel_msg_pump(struct urel_msg *m)
{
	struct urel_msg_req *r = m->reading.head, *next;

	for (; r; r = next) {
		next = r->next;
		urel_msg_rndv_post(m, r);
	}
}

/* A receive naming @src left the posted queue. */
void urel_msg_posted_gone(struct urel_msg *m, uint32_t src)
{
	if (src < m->npeers && m->peers[src])
		m->peers[src]->posted--;
}

/* Queue @q (its fields set) as the newest unexpected message. Under m->lock. */
void urel_msg_unexpected(struct urel_msg *m, struct urel_msg_handle *q)
{
	q->e.src = q->peer;
	urel_match_add_unexpected(&m->match, &q->e);
	urel_msg_wake(m); /* a blocking probe may wait for it */
}

/* Ask the sender of @r for the windows of its message. Under m->lock. */
static int urel_msg_send_cts(struct urel_msg *m, struct urel_msg_req *r)
{
	unsigned char hdr[sizeof(struct urel_am_hdr) + 24];
	struct urel_am_hdr h = urel_am_hdr(UREL_AM_MSG, UREL_MSG_OP_CTS, 0, 0);
	unsigned char *p = hdr + sizeof(h);

	memcpy(hdr, &h, sizeof(h));
	urel_msg_put64(p, r->sreq);
	urel_msg_put64(p + 8, r->rid);
	urel_msg_put64(p + 16, r->want);
	return urel_msg_post(m, r->st.peer, UREL_CHAN_CMD, hdr, sizeof(hdr), NULL, 0, NULL);
}

/*
 * The sender of a piecewise read announced a window (or its failure). Only
 * the next window in order, inside what we read, is taken. Under m->lock.
 */
static void urel_msg_on_win(struct urel_msg *m, urel_peer_t peer, const unsigned char *p)
{
	uint64_t rid = urel_msg_get64(p), off = urel_msg_get64(p + 8);
	uint64_t len = urel_msg_get64(p + 16), rkey = urel_msg_get64(p + 24);
	int64_t status = (int64_t)urel_msg_get64(p + 32);
	struct urel_msg_req *r;
	int slot;

	for (r = m->reading.head; r; r = r->next) {
		if (r->windowed && r->rid == rid && r->st.peer == peer)
			break;
	}
	if (!r || r->gerr) {
		m->dropped++;
		return;
	}
	if (status) {
		/* It could not register its buffer: a clear error, never a wait. */
		r->gerr = status < 0 && status >= -4095 ? (int)status : -EPROTO;
		r->nofin = true;
		if (!r->gets)
			urel_msg_rndv_finish(m, r);
		return;
	}
	slot = r->win[0].used ? (r->win[1].used ? -1 : 1) : 0;
	if (slot < 0 || off != r->wnext || !len || len > r->want - off) {
		m->dropped++;
		return;
	}
	r->win[slot] = (struct urel_msg_win){ .rkey = rkey, .off = off, .len = len, .used = true };
	r->wnext += len;
	urel_msg_rndv_post(m, r);
}

/*
 * An eager message's bytes land in receive @r, whose status has the
 * message's length already; a synchronous sender not answered yet gets its
 * SACK (@sack). Under m->lock.
 */
static inline void urel_msg_deliver_bytes(struct urel_msg *m, struct urel_msg_req *r,
					  urel_peer_t peer, bool sack, uint64_t sreq,
					  const void *data)
{
	r->st.received = r->st.len < r->cap ? r->st.len : r->cap;
	if (r->st.received)
		memcpy(r->buf, data, r->st.received);
	if (sack && urel_msg_send_ctl(m, peer, UREL_MSG_OP_SACK, sreq, 0))
		m->dropped++;
	urel_msg_complete(r);
}

/* Receive @r matched message @u (not queued: fresh from the wire or taken off the queue). */
void urel_msg_deliver(struct urel_msg *m, struct urel_msg_req *r, const struct urel_msg_handle *u,
		      const void *data)
{
	r->st.peer = u->peer;
	r->st.tag = u->e.bits;
	r->st.len = u->len;
	r->st.data = u->imm;
	r->st.error = u->len > r->cap ? -EMSGSIZE : 0;
	if (u->op == UREL_MSG_OP_SELF) {
		/* Our own send: one copy from its buffer, and it is done too. */
		r->st.received = u->len < r->cap ? u->len : r->cap;
		if (r->st.received)
			memcpy(r->buf, u->self->buf, r->st.received);
		urel_msg_complete(u->self);
		urel_msg_complete(r);
		return;
	}
	if (u->op == UREL_MSG_OP_EAGER) {
		urel_msg_deliver_bytes(m, r, u->peer, u->flags & UREL_MSG_F_SYNC && !u->acked,
				       u->sreq, data);
		return;
	}
	r->tail_used = true;
	r->sreq = u->sreq;
	r->rkey = u->rkey;
	r->want = u->len < r->cap ? u->len : r->cap;
	if (urel_msg_peer_err(m, u->peer)) {
		/* Its sender is gone: nothing to read from. */
		r->st.error = urel_msg_peer_err(m, u->peer);
		urel_msg_complete(r);
		return;
	}
	urel_msg_list_add(&m->reading, r);
	if (u->flags & UREL_MSG_F_WIN && r->want) {
		r->windowed = true;
		r->rid = ++m->next_id;
		r->need_cts = true;
	}
	urel_msg_rndv_post(m, r);
}

/* Fill @u from a message of @peer (the fields delivery and the queue read). */
static void urel_msg_handle_fill(struct urel_msg_handle *u, urel_peer_t peer,
				 const struct urel_am_hdr *h, uint64_t imm, const unsigned char *p,
				 size_t len)
{
	u->peer = peer;
	u->op = h->op;
	u->flags = h->flags;
	u->acked = false;
	u->imm = imm;
	u->e.bits = urel_msg_get64(p);
	u->sreq = urel_msg_get64(p + 8);
	u->len = h->op == UREL_MSG_OP_RTS ? urel_msg_get64(p + 16) : len - 16;
	u->rkey = h->op == UREL_MSG_OP_RTS ? urel_msg_get64(p + 24) : 0;
	u->data = NULL;
	u->self = NULL;
}

/*
 * A message whose turn has come, from @peer. Under m->lock. -ENOMEM when
 * it could not be queued as unexpected: then nothing changed.
 */
static int urel_msg_arrive(struct urel_msg *m, urel_peer_t peer, const struct urel_am_hdr *h,
			   uint64_t imm, const unsigned char *p, size_t len)
{
	/* Only the handle's own fields: the queue sets its entry's (no zeroing per message). */
	struct urel_msg_handle u;
	const unsigned char *data = p + (h->op == UREL_MSG_OP_RTS ? 32 : 16);
	size_t dlen = h->op == UREL_MSG_OP_RTS ? 0 : len - 16;
	uint64_t bits = urel_msg_get64(p);
	struct urel_match_entry *e;
	struct urel_msg_handle *q;

	e = urel_match_incoming(&m->match, peer, bits);
	if (e && h->op == UREL_MSG_OP_EAGER) {
		/* The common case, a posted receive's: its status straight from the wire. */
		struct urel_msg_req *r = (struct urel_msg_req *)e;

		urel_msg_posted_gone(m, e->src);
		r->st.peer = peer;
		r->st.tag = bits;
		r->st.len = dlen;
		r->st.data = imm;
		r->st.error = dlen > r->cap ? -EMSGSIZE : 0;
		urel_msg_deliver_bytes(m, r, peer, h->flags & UREL_MSG_F_SYNC,
				       urel_msg_get64(p + 8), data);
		return 0;
	}
	urel_msg_handle_fill(&u, peer, h, imm, p, len);
	if (e) {
		urel_msg_posted_gone(m, e->src);
		urel_msg_deliver(m, (struct urel_msg_req *)e, &u, data);
		return 0;
	}
	q = malloc(sizeof(*q));
	if (!q)
		return -ENOMEM;
	urel_msg_handle_fill(q, peer, h, imm, p, len);
	q->m = m;
	if (dlen) {
		q->data = malloc(dlen);
		if (!q->data) {
			free(q);
			return -ENOMEM;
		}
		memcpy(q->data, data, dlen);
		m->unexp_bytes += dlen;
		if (m->unexp_bytes > m->unexp_peak)
			m->unexp_peak = m->unexp_bytes;
	}
	urel_msg_unexpected(m, q);
	return 0;
}

static bool urel_msg_well_formed(const struct urel_am_hdr *h, size_t len)
{
	switch (h->op) {
	case UREL_MSG_OP_EAGER:
		return len >= 16;
	case UREL_MSG_OP_RTS:
		return len == 32;
	case UREL_MSG_OP_SACK:
		return len == 8;
	case UREL_MSG_OP_FIN:
		return len == 16;
	case UREL_MSG_OP_PING:
		return len == 8;
	case UREL_MSG_OP_CTS:
		return len == 24;
	case UREL_MSG_OP_WIN:
		return len == 40;
	case UREL_MSG_OP_WDONE:
		return len == 16;
	default:
		return false;
	}
}

/*
 * Hold an early arrival until its turn; kept sorted by distance from
 * rx_next. -ENOMEM (nothing changed) when it could not be copied.
 */
static int urel_msg_hold(struct urel_msg *m, struct urel_msg_peer *pp, const struct urel_am_hdr *h,
			 uint64_t imm, const void *payload, size_t len)
{
	uint32_t dist = h->seq - pp->rx_next;
	struct urel_msg_early *e, **pos;

	if (dist >= UREL_MSG_OOO_WINDOW) {
		m->dropped++;
		return 0;
	}
	e = malloc(sizeof(*e) + len);
	if (!e)
		return -ENOMEM;
	e->h = *h;
	e->imm = imm;
	e->len = len;
	memcpy(e->data, payload, len);
	m->early++;
	m->early_bytes += len;
	for (pos = &pp->early; *pos && (*pos)->h.seq - pp->rx_next < dist; pos = &(*pos)->next)
		;
	e->next = *pos;
	*pos = e;
	return 0;
}

/*
 * Deliver the held arrivals of @pp whose turn has come. One that cannot be
 * queued for lack of memory stays first, and urel_msg_progress() retries.
 * Under m->lock.
 */
void urel_msg_release_early(struct urel_msg *m, urel_peer_t peer, struct urel_msg_peer *pp)
{
	while (pp->early && pp->early->h.seq == pp->rx_next) {
		struct urel_msg_early *e = pp->early;

		if (urel_msg_arrive(m, peer, &e->h, e->imm, e->data, e->len)) {
			m->deferred++;
			m->early_stalled = true;
			return;
		}
		pp->early = e->next;
		m->early--;
		m->early_bytes -= e->len;
		free(e);
		pp->rx_next++;
	}
}

/* A protocol message other than EAGER or RTS (well formed). Under m->lock. */
static void urel_msg_on_ctl(struct urel_msg *m, const struct urel_am_hdr *h, urel_peer_t peer,
			    const unsigned char *p)
{
	switch (h->op) {
	case UREL_MSG_OP_SACK:
		urel_msg_on_sack(m, peer, urel_msg_get64(p));
		break;
	case UREL_MSG_OP_FIN:
		urel_msg_on_fin(m, peer, urel_msg_get64(p), (int)(int64_t)urel_msg_get64(p + 8));
		break;
	case UREL_MSG_OP_CTS:
		urel_msg_on_cts(m, peer, urel_msg_get64(p), urel_msg_get64(p + 8),
				urel_msg_get64(p + 16));
		break;
	case UREL_MSG_OP_WIN:
		urel_msg_on_win(m, peer, p);
		break;
	case UREL_MSG_OP_WDONE:
		urel_msg_on_wdone(m, peer, urel_msg_get64(p), urel_msg_get64(p + 8));
		break;
	default: /* PING: its ACK was all it was for */
		break;
	}
}

/*
 * A message that cannot be kept for lack of memory is not dropped: the
 * core offers it again (UREL_RECV_AGAIN), and its sender's later messages
 * wait behind it.
 */
int urel_msg_on_am(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
		   const void *payload, size_t len)
{
	struct urel_msg *m = arg;
	const unsigned char *p = payload;
	struct urel_msg_peer *pp;
	int ret = 0;

	urel_msg_lock(&m->lock);
	if (!urel_msg_well_formed(h, len)) {
		m->dropped++;
		goto out;
	}
	/* Messages first: they are the common case. */
	if (h->op != UREL_MSG_OP_EAGER && h->op != UREL_MSG_OP_RTS) {
		urel_msg_on_ctl(m, h, c->peer, p);
		goto out;
	}
	pp = urel_msg_peer(m, c->peer);
	if (!pp || pp->err) {
		/* A failed peer's stream broke: what it still sends cannot be ordered. */
		m->dropped++;
		goto out;
	}
	if (h->seq != pp->rx_next) {
		ret = urel_msg_hold(m, pp, h, c->imm, payload, len);
	} else if (pp->early && pp->early->h.seq == pp->rx_next) {
		/* Its twin is held, due, waiting for memory. */
		m->dropped++;
	} else {
		ret = urel_msg_arrive(m, c->peer, h, c->imm, p, len);
		if (!ret) {
			pp->rx_next++;
			if (pp->early)
				urel_msg_release_early(m, c->peer, pp);
		}
	}
	if (ret) {
		m->deferred++;
		ret = UREL_RECV_AGAIN;
	}
out:
	urel_msg_unlock(&m->lock);
	return ret;
}

/* Under m->lock; on the live list already (urel_msg_req_alloc()). */
static struct urel_msg_req *urel_msg_recv_req(struct urel_msg *m, void *buf, size_t len)
{
	struct urel_msg_req *r = urel_msg_req_alloc(m);

	if (!r)
		return NULL;
	r->kind = UREL_MSG_REQ_RECV;
	r->buf = buf;
	r->cap = len;
	return r;
}

/* Match @r with queued message @u (taken off the queue), then free @u. Under m->lock. */
static void urel_msg_take(struct urel_msg *m, struct urel_msg_req *r, struct urel_msg_handle *u)
{
	urel_msg_deliver(m, r, u, u->data);
	if (u->op == UREL_MSG_OP_EAGER)
		m->unexp_bytes -= u->len;
	free(u->data);
	free(u);
}

UREL_API int urel_msg_irecv(struct urel_msg *m, urel_peer_t peer, void *buf, size_t len,
			    uint64_t tag, uint64_t ignore, struct urel_msg_req **reqp)
{
	struct urel_msg_peer *pp = NULL;
	struct urel_match_entry *e;
	struct urel_msg_req *r;
	int ret = 0;

	if (!m || !reqp || (!buf && len))
		return -EINVAL;
	urel_msg_lock(&m->lock);
	r = urel_msg_recv_req(m, buf, len);
	if (!r) {
		urel_msg_unlock(&m->lock);
		return -ENOMEM;
	}
	e = urel_match_unexpected(&m->match, urel_msg_src(peer), tag & ~ignore, ignore, true);
	if (e) {
		urel_msg_take(m, r, (struct urel_msg_handle *)e);
	} else if (peer != UREL_MSG_ANY_PEER && peer != UREL_MSG_SELF &&
		   !(pp = urel_msg_peer(m, peer))) {
		ret = -ENOMEM;
	} else if (pp && pp->err) {
		/* Nothing more will come from a failed peer. */
		r->st.peer = peer;
		r->st.error = pp->err;
		urel_msg_complete(r);
	} else {
		if (pp)
			pp->posted++;
		r->e.src = urel_msg_src(peer);
		r->e.bits = tag;
		r->e.ignore = ignore;
		/* Growth failing leaves the receive queued, only in a crowded bin. */
		urel_match_post(&m->match, &r->e);
	}
	if (ret)
		urel_msg_req_forget(m, r);
	urel_msg_unlock(&m->lock);
	if (ret) {
		free(r);
		return ret;
	}
	*reqp = r;
	return 0;
}

UREL_API int urel_msg_cancel(struct urel_msg_req *r)
{
	struct urel_msg *m;
	int ret = -EBUSY;

	if (!r || r->kind != UREL_MSG_REQ_RECV)
		return -EINVAL;
	m = r->m;
	urel_msg_lock(&m->lock);
	if (urel_match_remove(&m->match, &r->e)) {
		urel_msg_posted_gone(m, r->e.src);
		r->st.error = -ECANCELED;
		urel_msg_complete(r);
		ret = 0;
	}
	urel_msg_unlock(&m->lock);
	return ret;
}

static void urel_msg_probe_status(const struct urel_msg_handle *u, struct urel_msg_status *st)
{
	if (!st)
		return;
	*st = (struct urel_msg_status){
		.peer = u->peer,
		.tag = u->e.bits,
		.len = u->len,
		.data = u->imm,
	};
}

/* One probe attempt after a progress pass; 1 found, 0 not. */
static int urel_msg_probe_once(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
			       struct urel_msg_handle **hp, struct urel_msg_status *st)
{
	struct urel_match_entry *e;
	struct urel_msg_handle *u;
	int ret;

	ret = urel_msg_progress(m);
	if (ret < 0)
		return ret;
	urel_msg_lock(&m->lock);
	e = urel_match_unexpected(&m->match, urel_msg_src(peer), tag & ~ignore, ignore, hp);
	if (e) {
		u = (struct urel_msg_handle *)e;
		urel_msg_probe_status(u, st);
		if (hp) {
			/* Claimed: the match happened here, a synchronous sender may go on. */
			/* (SACK to a failed peer is refused, harmlessly.) */
			urel_msg_self_claim(m, u);
			if (u->flags & UREL_MSG_F_SYNC && u->op == UREL_MSG_OP_EAGER) {
				if (urel_msg_send_ctl(m, u->peer, UREL_MSG_OP_SACK, u->sreq, 0))
					m->dropped++;
				u->acked = true;
			}
			*hp = u;
		}
	}
	/* Nothing from a failed peer is still to come. */
	ret = !e && peer != UREL_MSG_ANY_PEER ? urel_msg_peer_err(m, peer) : 0;
	urel_msg_unlock(&m->lock);
	return ret ? ret : e ? 1 : 0;
}

UREL_API int urel_msg_iprobe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
			     struct urel_msg_status *st)
{
	if (!m)
		return -EINVAL;
	return urel_msg_probe_once(m, peer, tag, ignore, NULL, st);
}

UREL_API int urel_msg_improbe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
			      struct urel_msg_handle **hp, struct urel_msg_status *st)
{
	if (!m || !hp)
		return -EINVAL;
	return urel_msg_probe_once(m, peer, tag, ignore, hp, st);
}

struct urel_msg_probe_wait {
	struct urel_msg *m;
	urel_peer_t peer;
	uint64_t tag, ignore;
};

static bool urel_msg_probe_ready(void *arg)
{
	struct urel_msg_probe_wait *w = arg;
	struct urel_match_entry *e;

	/* Under m->lock: peek only; the claim happens in urel_msg_probe_once(). */
	e = urel_match_unexpected(&w->m->match, urel_msg_src(w->peer), w->tag & ~w->ignore,
				  w->ignore, false);
	return e != NULL;
}

static int urel_msg_probe_block(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
				struct urel_msg_handle **hp, struct urel_msg_status *st)
{
	struct urel_msg_probe_wait w = { m, peer, tag, ignore };
	int ret;

	for (;;) {
		ret = urel_msg_probe_once(m, peer, tag, ignore, hp, st);
		if (ret)
			return ret < 0 ? ret : 0;
		ret = urel_msg_block(m, urel_msg_probe_ready, &w);
		if (ret)
			return ret;
	}
}

UREL_API int urel_msg_probe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
			    struct urel_msg_status *st)
{
	if (!m)
		return -EINVAL;
	return urel_msg_probe_block(m, peer, tag, ignore, NULL, st);
}

UREL_API int urel_msg_mprobe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
			     struct urel_msg_handle **hp, struct urel_msg_status *st)
{
	if (!m || !hp)
		return -EINVAL;
	return urel_msg_probe_block(m, peer, tag, ignore, hp, st);
}

UREL_API int urel_msg_imrecv(struct urel_msg_handle *h, void *buf, size_t len,
			     struct urel_msg_req **reqp)
{
	struct urel_msg_req *r;
	struct urel_msg *m;

	if (!h || !reqp || (!buf && len))
		return -EINVAL;
	m = h->m;
	urel_msg_lock(&m->lock);
	r = urel_msg_recv_req(m, buf, len);
	if (!r) {
		urel_msg_unlock(&m->lock);
		return -ENOMEM;
	}
	urel_msg_take(m, r, h);
	urel_msg_unlock(&m->lock);
	*reqp = r;
	return 0;
}

UREL_API int urel_msg_mrecv(struct urel_msg_handle *h, void *buf, size_t len,
			    struct urel_msg_status *st)
{
	struct urel_msg_req *r;
	int ret = urel_msg_imrecv(h, buf, len, &r);

	return ret ? ret : urel_msg_wait(r, st);
}

static void urel_msg_fail_posted(void *arg, struct urel_match_entry *e)
{
	struct urel_msg_req *r = (struct urel_msg_req *)e;
	struct urel_msg *m = arg;

	urel_msg_posted_gone(m, e->src);
	r->st.error = m->fail_err;
	urel_msg_complete(r);
}

/* @peer failed: its reads and every receive that could wait on it end. Under m->lock. */
void urel_msg_fail_recvs(struct urel_msg *m, urel_peer_t peer, int err)
{
	struct urel_msg_req *r = m->reading.head, *next;

	for (; r; r = next) {
		next = r->next;
		if (r->st.peer != peer)
			continue;
		if (!r->gerr)
			r->gerr = err;
		/* Gets still out end with the connection; the last one finishes. */
		if (!r->gets)
			urel_msg_rndv_finish(m, r);
	}
	m->fail_err = err;
	urel_match_drain_posted(&m->match, peer, urel_msg_fail_posted, m);
}

void urel_msg_free_recvs(struct urel_msg *m)
{
	struct urel_match_entry *e;

	/* The requests themselves are on the live list; close frees them. */
	while (m->reading.head)
		urel_msg_list_del(&m->reading, m->reading.head);
	while ((e = urel_match_unexpected(&m->match, UREL_MATCH_ANY_SRC, 0, UINT64_MAX, true))) {
		struct urel_msg_handle *u = (struct urel_msg_handle *)e;

		free(u->data);
		free(u);
	}
	while (urel_match_take_posted(&m->match))
		;
}
