// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the target side of the window protocol, run by
 * whoever drives the endpoint's progress. Every field from the wire is
 * checked (window id, source, ranges, types, lock holds) before it is
 * used; replies are built under the context lock and sent after it.
 * Memory a request needs (its reply, a fetch's old values, a queued lock
 * and its grant) is allocated before anything changes: when it cannot be,
 * the request is left for a later try (UREL_RECV_AGAIN), never half done.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "osc.h"

/* Lock holders one watch round pings, over every window. */
#define UREL_OSC_WATCH_PINGS 64

/* Lock requests one window keeps queued, per member: more is a flood. */
#define UREL_OSC_LOCK_QUEUE_PER_RANK 2

/* A reply (or a grant) to send once the lock is dropped. */
struct urel_osc_reply {
	struct urel_osc_reply *next;
	urel_peer_t peer;
	unsigned int chan, op, flags;
	struct urel_osc_wire wire;
	void *data; /* owned */
	size_t dlen;
};

int urel_osc_local_range(struct urel_win *w, uint64_t disp, uint64_t len, void **p)
{
	if (w->flavor != UREL_WIN_FLAVOR_DYNAMIC) {
		if (disp > w->len || len > w->len - disp)
			return UREL_WIN_ERR_RANGE;
		*p = (char *)w->base + disp;
		return 0;
	}
	for (struct urel_osc_region *r = w->regions; r; r = r->next) {
		if (disp >= r->base && len <= r->len && disp - r->base <= r->len - len) {
			*p = (void *)(uintptr_t)disp;
			return 0;
		}
	}
	return UREL_WIN_ERR_ATTACH;
}

/* Fill and queue @r, allocated by the caller before it changed anything. */
static struct urel_osc_reply *urel_osc_reply(struct urel_osc_reply ***tail,
					     struct urel_osc_reply *r, urel_peer_t peer,
					     unsigned int chan, unsigned int op, uint32_t win,
					     uint64_t cookie, int status)
{
	memset(r, 0, sizeof(*r));
	r->peer = peer;
	r->chan = chan;
	r->op = op;
	r->wire.win = win;
	r->wire.cookie = cookie;
	r->wire.status = status;
	**tail = r;
	*tail = &r->next;
	return r;
}

/* Check an accumulate completely; 0 and where it applies in *@p, or its error. */
static int urel_osc_acc_check(struct urel_win *w, unsigned int flags,
			      const struct urel_osc_wire *wi, size_t dlen, void **p)
{
	bool fetch = flags & UREL_OSC_F_FETCH, cas = flags & UREL_OSC_F_CAS;
	size_t esz = urel_osc_type_size(wi->type);
	int ret;

	ret = urel_osc_op_check(wi->type, wi->op, fetch);
	if (ret)
		return ret;
	if (cas && (!urel_osc_type_is_int(wi->type) || wi->count != 1))
		return UREL_WIN_ERR_TYPE;
	if (!wi->count || wi->count > dlen || dlen != wi->count * esz * (cas ? 2 : 1))
		return -EINVAL;
	ret = urel_osc_local_range(w, wi->disp, wi->count * esz, p);
	if (ret)
		return ret;
	if ((uintptr_t)*p % esz)
		return -EINVAL;
	return 0;
}

static int urel_osc_on_acc(struct urel_win *w, const struct urel_am_hdr *h,
			   const struct urel_osc_wire *wi, const void *data, size_t dlen,
			   void **old)
{
	bool fetch = h->flags & UREL_OSC_F_FETCH, cas = h->flags & UREL_OSC_F_CAS;
	void *p;
	int ret;

	ret = urel_osc_acc_check(w, h->flags, wi, dlen, &p);
	if (ret)
		return ret;
	if (fetch) {
		*old = malloc(wi->count * urel_osc_type_size(wi->type));
		if (!*old)
			return -ENOMEM;
	}
	urel_osc_apply(p, data, fetch ? *old : NULL, wi->count, wi->type, wi->op, cas);
	return 0;
}

static void urel_osc_on_acc_ack(struct urel_win *w, int src, const struct urel_am_hdr *h,
				const struct urel_osc_wire *wi, const void *data, size_t dlen)
{
	struct urel_osc_target *t = &w->t[src];

	if (!(h->flags & UREL_OSC_F_FETCH)) {
		if (!t->am_out) {
			__atomic_fetch_add(&w->ctx->dropped, 1, __ATOMIC_RELAXED);
			return;
		}
		t->am_out--;
		if (wi->status && !t->err)
			t->err = wi->status;
		return;
	}
	for (struct urel_osc_fetch *f = w->fetches; f; f = f->next) {
		if (f->id != wi->cookie || f->target != src || f->done)
			continue;
		f->status = h->op == UREL_OSC_LOCK_ACK ? (int)(int64_t)wi->base : wi->status;
		if (!f->status && dlen != f->len)
			f->status = -EPROTO;
		if (!f->status)
			memcpy(f->result, data, dlen);
		f->done = true;
		return;
	}
	__atomic_fetch_add(&w->ctx->dropped, 1, __ATOMIC_RELAXED);
}

static void urel_osc_lockreq_free(struct urel_osc_lockreq *r)
{
	free(r->op_wire);
	free(r->data);
	free(r->old);
	free(r);
}

/* Apply a granted request's piggy-backed operation into its LOCK_ACK @rep. */
static void urel_osc_grant_op(struct urel_win *w, struct urel_osc_lockreq *g,
			      struct urel_osc_reply *rep)
{
	const struct urel_osc_wire *wi = g->op_wire;
	int status = g->op_status;
	void *p;

	rep->flags |= UREL_OSC_F_PIGGY | (g->op_flags & UREL_OSC_F_FETCH);
	if (!status) /* again: a dynamic window may have changed while it waited */
		status = urel_osc_acc_check(w, g->op_flags, wi, g->dlen, &p);
	if (!status) {
		urel_osc_apply(p, g->data, g->old, wi->count, wi->type, wi->op,
			       g->op_flags & UREL_OSC_F_CAS);
		if (g->old) {
			rep->data = g->old;
			rep->dlen = wi->count * urel_osc_type_size(wi->type);
			g->old = NULL;
		}
	}
	rep->wire.base = (uint64_t)(int64_t)status;
}

/*
 * Grants of the lock manager: to ourselves a flag, to others a LOCK_ACK
 * (with a piggy-backed operation applied now). A request that asked to be
 * released once granted is, and what that grants follows.
 */
static void urel_osc_grants(struct urel_win *w, struct urel_osc_lockreq *g,
			    struct urel_osc_reply ***tail)
{
	while (g) {
		struct urel_osc_lockreq *next = g->next, *more = NULL, **end;
		struct urel_osc_reply *rep;

		w->t[g->origin].held = g->type;
		if (g->origin == w->rank) {
			w->t[w->rank].granted = true;
			free(g->grant);
			urel_osc_lockreq_free(g);
			g = next;
			continue;
		}
		rep = urel_osc_reply(tail, g->grant, w->t[g->origin].peer, UREL_CHAN_CMD,
				     UREL_OSC_LOCK_ACK, w->id, g->cookie, 0);
		if (g->piggy)
			urel_osc_grant_op(w, g, rep);
		if (g->counted)
			w->lm.queued_bytes -= g->dlen;
		if (g->unlock_after) {
			rep->flags |= UREL_OSC_F_UNLOCK;
			w->t[g->origin].held = 0;
			urel_osc_lock_release(&w->lm, g->type, &more);
			for (end = &more; *end; end = &(*end)->next)
				;
			*end = next;
			next = more;
		}
		urel_osc_lockreq_free(g);
		g = next;
	}
}

/*
 * A lock request, with perhaps an operation to apply once granted or a
 * release to do then. Queued with an operation: kept within the window's
 * budget (LOCK_QUEUED) or dropped (LOCK_DISCARDED, the origin sends it
 * again), answered with *@spare. Everything is allocated before the lock
 * manager sees the request.
 */
static int urel_osc_on_lock(struct urel_win *w, int src, const struct urel_am_hdr *h,
			    const struct urel_osc_wire *wi, const void *data, size_t dlen,
			    struct urel_osc_reply **spare, struct urel_osc_reply ***tail)
{
	struct urel_osc_lockreq *r;
	struct urel_osc_reply *q;
	bool fetch = h->flags & UREL_OSC_F_FETCH;
	void *p;
	int ret;

	if (w->flags & UREL_WIN_NO_LOCKS)
		return UREL_WIN_ERR_NOLOCKS;
	if (w->t[src].held ||
	    (w->lm.word && urel_osc_lw_holds(__atomic_load_n(w->lm.word, __ATOMIC_ACQUIRE), src)))
		return -EBUSY; /* a second lock from the same origin */
	for (r = w->lm.head; r; r = r->next) {
		if (r->origin == src)
			return -EBUSY;
	}
	if (w->lm.queued >= (unsigned int)w->size * UREL_OSC_LOCK_QUEUE_PER_RANK)
		return -EBUSY;
	if (wi->lock_type != UREL_WIN_LOCK_SHARED && wi->lock_type != UREL_WIN_LOCK_EXCLUSIVE)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->grant = malloc(sizeof(struct urel_osc_reply));
	if (!r->grant) {
		free(r);
		return -ENOMEM;
	}
	r->unlock_after = h->flags & UREL_OSC_F_UNLOCK;
	if (h->flags & UREL_OSC_F_PIGGY) {
		r->piggy = true;
		r->op_flags = h->flags & (UREL_OSC_F_FETCH | UREL_OSC_F_CAS);
		r->op_status = dlen > UREL_OSC_PIGGY_MAX
				       ? -EINVAL
				       : urel_osc_acc_check(w, r->op_flags, wi, dlen, &p);
		if (!r->op_status) {
			r->op_wire = malloc(sizeof(*wi));
			r->data = malloc(dlen);
			if (fetch)
				r->old = malloc(wi->count * urel_osc_type_size(wi->type));
			if (!r->op_wire || !r->data || (fetch && !r->old)) {
				free(r->grant);
				urel_osc_lockreq_free(r);
				return -ENOMEM;
			}
			memcpy(r->op_wire, wi, sizeof(*wi));
			memcpy(r->data, data, dlen);
			r->dlen = dlen;
		}
	}
	r->type = wi->lock_type;
	r->origin = src;
	r->cookie = wi->cookie;
	ret = urel_osc_lock_acquire(&w->lm, r);
	if (ret == 1) {
		r->next = NULL;
		urel_osc_grants(w, r, tail);
		return 0;
	}
	if (!r->piggy)
		return 0;
	/* Queued with an operation: keep it within the budget, or drop it. */
	q = urel_osc_reply(tail, *spare, w->t[src].peer, UREL_CHAN_CMD, UREL_OSC_LOCK_QUEUED, w->id,
			   wi->cookie, 0);
	*spare = NULL;
	if (r->op_status || w->lm.queued_bytes + r->dlen <= w->lm.budget) {
		w->lm.queued_bytes += r->dlen;
		r->counted = true;
		return 0;
	}
	q->op = UREL_OSC_LOCK_DISCARDED;
	r->piggy = false;
	free(r->op_wire);
	free(r->data);
	free(r->old);
	r->op_wire = r->data = r->old = NULL;
	r->dlen = 0;
	return 0;
}

static int urel_osc_on_unlock(struct urel_win *w, int src, int type, unsigned int flags,
			      struct urel_osc_reply ***tail)
{
	struct urel_osc_lockreq *granted;
	int ret;

	if (flags & UREL_OSC_F_WORD) {
		/* Its release found our WAITERS mark: the word passes to the queue. */
		ret = type == UREL_WIN_LOCK_SHARED
			      ? urel_osc_lock_readers_gone(&w->lm, src, &granted)
			      : urel_osc_lock_handoff(&w->lm, src, &granted);
		if (!ret)
			urel_osc_grants(w, granted, tail);
		return ret;
	}
	if (!type || w->t[src].held != type)
		return -EINVAL;
	ret = urel_osc_lock_release(&w->lm, type, &granted);
	if (ret)
		return ret;
	w->t[src].held = 0;
	urel_osc_grants(w, granted, tail);
	return 0;
}

static void urel_osc_on_region(struct urel_win *w, const struct urel_osc_wire *wi,
			       struct urel_osc_reply *r)
{
	void *p;

	r->wire.status = w->flavor == UREL_WIN_FLAVOR_DYNAMIC ? 0 : UREL_WIN_ERR_FLAVOR;
	if (!r->wire.status)
		r->wire.status = urel_osc_local_range(w, wi->disp, wi->count ? wi->count : 1, &p);
	if (r->wire.status)
		return;
	for (struct urel_osc_region *g = w->regions; g; g = g->next) {
		if (wi->disp >= g->base && wi->disp - g->base < g->len) {
			r->wire.base = g->base;
			r->wire.count = g->len;
			r->wire.rkey = g->rkey;
			return;
		}
	}
}

static void urel_osc_decode(struct urel_osc_wire *wi, const void *payload)
{
	memcpy(wi, payload, sizeof(*wi));
	wi->win = le32toh(wi->win);
	wi->status = (int32_t)le32toh((uint32_t)wi->status);
	wi->cookie = le64toh(wi->cookie);
	wi->disp = le64toh(wi->disp);
	wi->count = le64toh(wi->count);
	wi->rkey = le64toh(wi->rkey);
	wi->base = le64toh(wi->base);
}

/* The requests a target answers: each gets one reply allocated up front. */
static bool urel_osc_answered(unsigned int op)
{
	return op == UREL_OSC_ACC || op == UREL_OSC_LOCK || op == UREL_OSC_UNLOCK ||
	       op == UREL_OSC_REGION;
}

/*
 * Target side: the request, answered with *@spare (taken: set to NULL);
 * origin side: the reply. Returns 1, 0 for garbage, or -ENOMEM when the
 * request could not get its memory and nothing changed.
 */
static int urel_osc_handle(struct urel_win *w, int src, const struct urel_am_hdr *h,
			   const struct urel_osc_wire *wi, const void *data, size_t dlen,
			   struct urel_osc_reply **spare, struct urel_osc_reply ***tail)
{
	struct urel_osc_target *t = &w->t[src];
	struct urel_osc_reply *r;
	void *old = NULL;
	int ret;

	switch (h->op) {
	case UREL_OSC_ACC:
		ret = urel_osc_on_acc(w, h, wi, data, dlen, &old);
		if (ret == -ENOMEM)
			return ret;
		r = urel_osc_reply(tail, *spare, t->peer, UREL_CHAN_DATA, UREL_OSC_ACC_ACK, w->id,
				   wi->cookie, ret);
		*spare = NULL;
		r->flags = h->flags & UREL_OSC_F_FETCH;
		r->data = old;
		r->dlen = old ? wi->count * urel_osc_type_size(wi->type) : 0;
		return 1;
	case UREL_OSC_ACC_ACK:
		urel_osc_on_acc_ack(w, src, h, wi, data, dlen);
		return 1;
	case UREL_OSC_LOCK:
		ret = urel_osc_on_lock(w, src, h, wi, data, dlen, spare, tail);
		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			urel_osc_reply(tail, *spare, t->peer, UREL_CHAN_CMD, UREL_OSC_LOCK_ACK,
				       w->id, wi->cookie, ret);
			*spare = NULL;
		}
		return 1;
	case UREL_OSC_LOCK_ACK:
		if (!t->lock || t->granted)
			return 0;
		t->granted = true;
		t->lock_status = wi->status;
		if ((h->flags & UREL_OSC_F_UNLOCK) || (wi->status && t->unlocking))
			t->unlocked = true;
		if (wi->status || !(h->flags & UREL_OSC_F_PIGGY))
			return 1;
		t->piggy_applied = true;
		t->piggy_status = (int)(int64_t)wi->base;
		if (h->flags & UREL_OSC_F_FETCH)
			urel_osc_on_acc_ack(w, src, h, wi, data, dlen);
		return 1;
	case UREL_OSC_LOCK_QUEUED:
		__atomic_fetch_add(&w->ctx->lock_queued, 1, __ATOMIC_RELAXED);
		return 1;
	case UREL_OSC_LOCK_DISCARDED:
		__atomic_fetch_add(&w->ctx->lock_discarded, 1, __ATOMIC_RELAXED);
		return 1;
	case UREL_OSC_UNLOCK:
		ret = urel_osc_on_unlock(w, src, wi->lock_type, h->flags, tail);
		urel_osc_reply(tail, *spare, t->peer, UREL_CHAN_CMD, UREL_OSC_UNLOCK_ACK, w->id,
			       wi->cookie, ret);
		*spare = NULL;
		return 1;
	case UREL_OSC_UNLOCK_ACK:
		if (t->unlocked)
			return 0;
		t->unlocked = true;
		if (wi->status && !t->err)
			t->err = wi->status;
		return 1;
	case UREL_OSC_POST:
		t->posts++;
		return 1;
	case UREL_OSC_COMPLETE:
		t->completes++;
		return 1;
	case UREL_OSC_REGION:
		r = urel_osc_reply(tail, *spare, t->peer, UREL_CHAN_CMD, UREL_OSC_REGION_ACK, w->id,
				   wi->cookie, 0);
		*spare = NULL;
		urel_osc_on_region(w, wi, r);
		return 1;
	case UREL_OSC_PING:
		return 1;
	case UREL_OSC_REGION_ACK:
		if (t->region_done)
			return 0;
		t->region_status = wi->status;
		t->region_ack.base = wi->base;
		t->region_ack.len = wi->count;
		t->region_ack.rkey = wi->rkey;
		t->region_done = true;
		return 1;
	}
	return 0;
}

static void urel_osc_send_replies(struct urel_osc_ctx *c, struct urel_osc_reply *r)
{
	while (r) {
		struct urel_osc_reply *next = r->next;

		if (urel_osc_send(c, r->peer, r->chan, r->op, r->flags, &r->wire, r->data, r->dlen))
			__atomic_fetch_add(&c->dropped, 1, __ATOMIC_RELAXED);
		free(r->data);
		free(r);
		r = next;
	}
}

int urel_osc_on_am(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
		   const void *payload, size_t len)
{
	struct urel_osc_ctx *ctx = arg;
	struct urel_osc_reply *replies = NULL, **tail = &replies, *spare = NULL;
	struct urel_osc_wire wi;
	struct urel_win *w;
	int src, ret = 0;

	if (len < sizeof(wi))
		goto out;
	if (urel_osc_answered(h->op)) {
		spare = malloc(sizeof(*spare));
		if (!spare)
			goto again;
	}
	urel_osc_decode(&wi, payload);
	pthread_mutex_lock(&ctx->lock);
	w = urel_osc_find(ctx, wi.win);
	src = w ? urel_osc_rank_of(w, c->peer) : -1;
	if (src >= 0)
		ret = urel_osc_handle(w, src, h, &wi, (const char *)payload + sizeof(wi),
				      len - sizeof(wi), &spare, &tail);
	if (ret > 0)
		urel_osc_wake(ctx);
	pthread_mutex_unlock(&ctx->lock);
	free(spare);
	if (ret == -ENOMEM)
		goto again;
	urel_osc_send_replies(ctx, replies);
out:
	if (ret <= 0)
		__atomic_fetch_add(&ctx->dropped, 1, __ATOMIC_RELAXED);
	return 0;
again:
	__atomic_fetch_add(&ctx->deferred, 1, __ATOMIC_RELAXED);
	return UREL_RECV_AGAIN;
}

int urel_osc_self_lock(struct urel_win *w, int type)
{
	struct urel_osc_lockreq *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	r->type = type;
	r->origin = w->rank;
	pthread_mutex_lock(&w->ctx->lock);
	w->t[w->rank].granted = false;
	ret = urel_osc_lock_acquire(&w->lm, r);
	if (ret == 1) {
		w->t[w->rank].held = type;
		w->t[w->rank].granted = true;
		free(r);
	} else if (ret < 0) {
		free(r);
	}
	pthread_mutex_unlock(&w->ctx->lock);
	return ret;
}

/*
 * Origin @r of @w died: what it held is released and what it waited for
 * forgotten, so that the others get the lock. Under the context lock.
 */
static void urel_osc_release_dead(struct urel_win *w, int r, struct urel_osc_reply ***tail)
{
	struct urel_osc_lockreq *granted, *gone;

	if (w->t[r].held && !urel_osc_lock_release(&w->lm, w->t[r].held, &granted)) {
		w->t[r].held = 0;
		__atomic_fetch_add(&w->ctx->locks_reclaimed, 1, __ATOMIC_RELAXED);
		urel_osc_grants(w, granted, tail);
	}
	if (urel_osc_lock_reclaim(&w->lm, r, &granted)) {
		__atomic_fetch_add(&w->ctx->locks_reclaimed, 1, __ATOMIC_RELAXED);
		urel_osc_grants(w, granted, tail);
	}
	urel_osc_lock_forget(&w->lm, r, &gone, &granted);
	urel_osc_grants(w, granted, tail);
	while (gone) {
		struct urel_osc_lockreq *next = gone->next;

		if (gone->counted)
			w->lm.queued_bytes -= gone->dlen;
		free(gone->grant);
		urel_osc_lockreq_free(gone);
		gone = next;
	}
}

/*
 * Passive target: an origin that dies holding a lock here would keep it
 * for ever, and the kernel finds a dead peer only by sending to it. So,
 * every keepalive_ms, the holders of a lock others wait for are pinged
 * (their failure marks them dead), and the locks of origins found dead
 * are released, their grants sent. Run by the progress thread.
 */
void urel_osc_watch(struct urel_osc_ctx *c)
{
	struct urel_osc_reply *replies = NULL, **tail = &replies;
	struct {
		uint32_t win;
		urel_peer_t peer;
	} ping[UREL_OSC_WATCH_PINGS];
	uint64_t now = urel_osc_now_ms(), word;
	int n = 0;

	pthread_mutex_lock(&c->lock);
	if (now - c->last_watch_ms < c->keepalive_ms) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->last_watch_ms = now;
	for (struct urel_win *w = c->wins; w; w = w->next) {
		for (int r = 0; r < w->size; r++) {
			if (r != w->rank && urel_osc_is_dead(c, w->t[r].peer))
				urel_osc_release_dead(w, r, &tail);
		}
		/* More holders than fit are pinged in a later round. */
		for (int r = 0; w->lm.head && r < w->size && n < UREL_OSC_WATCH_PINGS; r++) {
			if (r != w->rank && w->t[r].held) {
				ping[n].win = w->id;
				ping[n++].peer = w->t[r].peer;
			}
		}
		/* The word's holders, named by the word itself. */
		word = w->lm.word ? __atomic_load_n(w->lm.word, __ATOMIC_ACQUIRE) : 0;
		for (int r = 0; w->lm.head && word && r < w->size && n < UREL_OSC_WATCH_PINGS;
		     r++) {
			if (r != w->rank && urel_osc_lw_holds(word, r)) {
				ping[n].win = w->id;
				ping[n++].peer = w->t[r].peer;
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	urel_osc_send_replies(c, replies);
	for (int i = 0; i < n; i++)
		urel_osc_ping(c, ping[i].win, ping[i].peer);
}

int urel_osc_self_unlock(struct urel_win *w, int type)
{
	struct urel_osc_reply *replies = NULL, **tail = &replies;
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	ret = urel_osc_on_unlock(w, w->rank, type, 0, &tail);
	pthread_mutex_unlock(&w->ctx->lock);
	urel_osc_send_replies(w->ctx, replies);
	return ret;
}
