// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the context of one endpoint (its windows by id, one
 * lock over all of them, the active-message handler id UREL_AM_OSC), the
 * sends of the window protocol and the progress loop of blocking calls.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "../group.h"
#include "../internal.h"
#include "../msg/standback.h"
#include "osc.h"

/*
 * Blocking calls poll this many times without news (a kernel round trip
 * is answered within them), then, with UREL_OSC_SPIN_US, go on polling,
 * yielding the CPU between polls, until that long passed without news,
 * then sleep: what the target's process serves (accumulates, manager
 * locks) then saves the caller a wake-up when that process runs promptly.
 * Off by default: it halves such sleeps, but under a loaded host no
 * latency gain showed, and it burns CPU when ranks outnumber CPUs.
 */
#define UREL_OSC_SPIN 200
#define UREL_OSC_SPIN_US_DEFAULT 0
#define UREL_OSC_SPIN_US_MAX 1000000
/* Polls between two readings of the clock while spinning (it may be a system call). */
#define UREL_OSC_SPIN_CLOCK 32
#define UREL_OSC_SLEEP_MS 10
/* Nested progress while a send waits for room in a message handler. */
#define UREL_OSC_NEST_MAX 16
/* The progress thread's longest sleep on the device: how soon it sees the last free. */
#define UREL_OSC_THREAD_SLEEP_MS 20
/*
 * A blocking call pings every peer it waits on this often (ms,
 * UREL_OSC_KEEPALIVE_MS): the kernel finds a dead peer only by a send to
 * it going unacknowledged, and a waiting origin may have nothing else to send.
 */
#define UREL_OSC_KEEPALIVE_DEFAULT 1000
/*
 * The last window's free waits for the context's pings to complete: their
 * completions are the only thing that frees them, and an endpoint
 * destroyed before leaves them unanswered. A peer that is alive answers in
 * a round trip and a dead one's fail at once; a peer dying unnoticed just
 * then is declared dead by the kernel within its stall_timeout_ms, which
 * bounds the wait (read from the module; this if it cannot be), plus a margin.
 */
#define UREL_OSC_STALL_DEFAULT_MS 30000
#define UREL_OSC_DRAIN_MARGIN_MS 2000
#define UREL_OSC_STALL_PARAM "/sys/module/usnic_rel/parameters/stall_timeout_ms"

static pthread_mutex_t urel_osc_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urel_osc_ctx *urel_osc_list;
static uint64_t urel_osc_gens; /* under urel_osc_list_lock */
static _Thread_local unsigned int urel_osc_nest;

static int urel_osc_limits(struct urel_osc_ctx *c)
{
	struct urel_ep_info info;
	int ret = urel_ep_query(c->ep, &info);

	if (ret)
		return ret;
	c->max_am = info.max_msg[UREL_CHAN_DATA];
	if (c->max_am > info.staging_size / 4)
		c->max_am = info.staging_size / 4;
	if (c->max_am <= UREL_OSC_HDR + 16)
		return -EMSGSIZE;
	c->max_rdma = info.max_msg[UREL_CHAN_DATA];
	if (c->max_rdma > info.staging_size / 4)
		c->max_rdma = info.staging_size / 4;
	return c->max_rdma ? 0 : -EMSGSIZE;
}

/* UREL_OSC_PROGRESS_THREAD=0 turns the progress thread off; anything else, or unset: on. */
static bool urel_osc_thread_wanted(void)
{
	const char *s = getenv("UREL_OSC_PROGRESS_THREAD");

	return !s || strcmp(s, "0") != 0;
}

/*
 * Passive target: lock requests and accumulates wait for the target's
 * progress, which a target that computes never makes. This thread makes
 * it: it sleeps on the device until something arrives and drains it. While
 * the application makes progress itself (an origin polling in a flush, a
 * target asleep in a blocking call), it stands back: sleeps without
 * touching the device or the locks, and looks again (urel_msg_bg_stand_back()).
 */
static void *urel_osc_progress_main(void *arg)
{
	struct urel_osc_ctx *c = arg;
	struct urel_msg_watcher wt;

	urel_msg_bg_look(c->m, &wt);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		int n;

		if (urel_msg_bg_stand_back(c->m, &wt, urel_waker_busy(&c->waker))) {
			__atomic_fetch_add(&c->standbacks, 1, __ATOMIC_RELAXED);
			urel_osc_watch(c); /* the application's calls never watch holders */
			continue;
		}
		n = urel_msg_progress_bg(c->m);
		if (n < 0)
			break; /* the endpoint is gone; the application's calls say so */
		urel_osc_watch(c);
		if (!n)
			urel_msg_bg_sleep(c->m, &wt, c->dev, UREL_OSC_THREAD_SLEEP_MS);
	}
	return NULL;
}

int urel_osc_ctx_get(struct urel_group *g, struct urel_osc_ctx **cp)
{
	struct urel_ep *ep = urel_group_ep(g);
	struct urel_osc_ctx *c;
	int ret = 0;

again:
	pthread_mutex_lock(&urel_osc_list_lock);
	for (c = urel_osc_list; c; c = c->next) {
		if (c->ep != ep)
			continue;
		if (!c->refs) {
			/* Its last window is being freed: wait until it is gone. */
			pthread_mutex_unlock(&urel_osc_list_lock);
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
			goto again;
		}
		c->refs++;
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	c->ep = ep;
	c->m = urel_group_msg(g);
	c->refs = 1;
	c->gen = ++urel_osc_gens;
	c->keepalive_ms = UREL_OSC_KEEPALIVE_DEFAULT;
	if (getenv("UREL_OSC_KEEPALIVE_MS")) {
		long v = strtol(getenv("UREL_OSC_KEEPALIVE_MS"), NULL, 0);

		if (v > 0 && v <= 600000)
			c->keepalive_ms = (uint32_t)v;
	}
	c->acc_credits = UREL_OSC_ACC_CREDITS;
	if (getenv("UREL_WIN_ACC_CREDITS")) {
		long v = strtol(getenv("UREL_WIN_ACC_CREDITS"), NULL, 0);

		if (v > 0 && v <= 65536)
			c->acc_credits = (uint32_t)v;
	}
	urel_waker_init(&c->waker);
	pthread_mutex_init(&c->lock, NULL);
	c->spin_us = UREL_OSC_SPIN_US_DEFAULT;
	if (getenv("UREL_OSC_SPIN_US")) {
		long v = strtol(getenv("UREL_OSC_SPIN_US"), NULL, 0);

		if (v >= 0 && v <= UREL_OSC_SPIN_US_MAX)
			c->spin_us = (uint32_t)v;
	}
	ret = urel_osc_limits(c);
	if (!ret)
		ret = urel_am_get(ep, &c->am);
	if (ret)
		goto err;
	c->dev = urel_am_device(c->am);
	ret = urel_am_register(c->am, UREL_AM_OSC, urel_osc_on_am, c);
	if (ret) {
		urel_am_put(c->am);
		goto err;
	}
	c->next = urel_osc_list;
	urel_osc_list = c;
	goto out;
err:
	pthread_mutex_destroy(&c->lock);
	urel_waker_fini(&c->waker);
	free(c);
out:
	pthread_mutex_unlock(&urel_osc_list_lock);
	if (!ret)
		*cp = c;
	return ret;
}

/*
 * Only windows that take locks need the thread (a no_locks window's
 * targets progress in their own fence, wait and free): started with the
 * first such window, it runs until the context goes.
 */
int urel_osc_ctx_thread(struct urel_osc_ctx *c)
{
	int ret = 0;

	/* The thread would call on the endpoint beside its caller. */
	if (c->ep->serial && urel_osc_thread_wanted())
		return -EINVAL;
	pthread_mutex_lock(&urel_osc_list_lock);
	if (!c->thread_on && urel_osc_thread_wanted()) {
		ret = -pthread_create(&c->thread, NULL, urel_osc_progress_main, c);
		c->thread_on = !ret;
	}
	pthread_mutex_unlock(&urel_osc_list_lock);
	return ret;
}

/* The kernel's longest wait before it declares a silent peer dead (ms). */
static uint64_t urel_osc_stall_ms(void)
{
	FILE *f = fopen(UREL_OSC_STALL_PARAM, "re");
	unsigned long v = 0;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : UREL_OSC_STALL_DEFAULT_MS;
}

/*
 * Progress until every ping of @c has completed, which the kernel's death
 * detection bounds. @c stays listed meanwhile, so that their completions find it.
 */
static void urel_osc_drain_pings(struct urel_osc_ctx *c)
{
	uint64_t until;
	unsigned int left;
	int n;

	pthread_mutex_lock(&c->lock);
	left = c->npinging;
	pthread_mutex_unlock(&c->lock);
	if (!left)
		return;
	until = urel_osc_now_ms() + urel_osc_stall_ms() + UREL_OSC_DRAIN_MARGIN_MS;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		left = c->npinging;
		pthread_mutex_unlock(&c->lock);
		if (!left || urel_osc_now_ms() >= until)
			return;
		n = urel_msg_progress(c->m);
		if (n < 0)
			return;
		if (!n)
			urel_device_wait(c->dev, 1);
	}
}

void urel_osc_ctx_put(struct urel_osc_ctx *c)
{
	struct urel_osc_ctx **pp;

	pthread_mutex_lock(&urel_osc_list_lock);
	if (--c->refs) {
		pthread_mutex_unlock(&urel_osc_list_lock);
		return;
	}
	pthread_mutex_unlock(&urel_osc_list_lock);
	if (c->thread_on) {
		__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
		pthread_join(c->thread, NULL);
	}
	urel_osc_drain_pings(c);
	pthread_mutex_lock(&urel_osc_list_lock);
	for (pp = &urel_osc_list; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	pthread_mutex_unlock(&urel_osc_list_lock);
	urel_am_unregister(c->am, UREL_AM_OSC);
	urel_am_put(c->am);
	pthread_mutex_destroy(&c->lock);
	urel_waker_fini(&c->waker);
	free(c->peer_state);
	free(c);
}

bool urel_osc_peer_fatal(int err)
{
	return err == -ETIMEDOUT || err == -EHOSTUNREACH || err == -ECONNRESET || err == -ECANCELED;
}

/* Under c->lock. */
static unsigned int urel_osc_peer_get(const struct urel_osc_ctx *c, urel_peer_t peer)
{
	return peer < c->peer_cap ? c->peer_state[peer] : 0;
}

/* Under c->lock: set @flag for @peer; false when it was set already, or no memory. */
static bool urel_osc_peer_set(struct urel_osc_ctx *c, urel_peer_t peer, unsigned int flag)
{
	if (peer >= c->peer_cap) {
		uint32_t cap = c->peer_cap ? c->peer_cap : 64;
		uint8_t *grown;

		while (cap <= peer && cap < UINT32_MAX / 2)
			cap *= 2;
		if (cap <= peer)
			return false;
		grown = realloc(c->peer_state, cap);
		if (!grown)
			return false;
		memset(grown + c->peer_cap, 0, cap - c->peer_cap);
		c->peer_state = grown;
		c->peer_cap = cap;
	}
	if (c->peer_state[peer] & flag)
		return false;
	c->peer_state[peer] |= (uint8_t)flag;
	return true;
}

bool urel_osc_is_dead(const struct urel_osc_ctx *c, urel_peer_t peer)
{
	return urel_osc_peer_get(c, peer) & UREL_OSC_PEER_DEAD;
}

void urel_osc_mark_dead(struct urel_osc_ctx *c, urel_peer_t peer)
{
	/* No memory: the next ping tries again. */
	if (peer && urel_osc_peer_set(c, peer, UREL_OSC_PEER_DEAD))
		c->ndead++;
}

bool urel_osc_any_dead(struct urel_win *w)
{
	bool dead = false;

	pthread_mutex_lock(&w->ctx->lock);
	for (int r = 0; !dead && r < w->size; r++)
		dead = r != w->rank && urel_osc_is_dead(w->ctx, w->t[r].peer);
	pthread_mutex_unlock(&w->ctx->lock);
	return dead;
}

/* A ping in flight: its completion reports the peer dead, if its context still exists. */
struct urel_osc_ping {
	struct urel_request req;
	uint64_t gen;
	urel_peer_t peer;
};

/* Under c->lock. */
static void urel_osc_unping(struct urel_osc_ctx *c, urel_peer_t peer)
{
	if (urel_osc_peer_get(c, peer) & UREL_OSC_PEER_PINGING) {
		c->peer_state[peer] &= (uint8_t)~UREL_OSC_PEER_PINGING;
		c->npinging--;
	}
}

/* Under c->lock: note a ping to @peer in flight; false when one is already, or no memory. */
static bool urel_osc_ping_begin(struct urel_osc_ctx *c, urel_peer_t peer)
{
	if (!urel_osc_peer_set(c, peer, UREL_OSC_PEER_PINGING))
		return false;
	c->npinging++;
	return true;
}

static void urel_osc_ping_done(struct urel_request *req, const struct urel_completion *cq)
{
	struct urel_osc_ping *p = (struct urel_osc_ping *)req;

	pthread_mutex_lock(&urel_osc_list_lock);
	for (struct urel_osc_ctx *c = urel_osc_list; c; c = c->next) {
		if (c->gen != p->gen)
			continue;
		pthread_mutex_lock(&c->lock);
		urel_osc_unping(c, p->peer);
		if (urel_osc_peer_fatal(cq->status)) {
			urel_osc_mark_dead(c, p->peer);
			urel_osc_wake(c); /* a call waiting on it fails now */
		}
		pthread_mutex_unlock(&c->lock);
		break;
	}
	pthread_mutex_unlock(&urel_osc_list_lock);
	free(p);
}

void urel_osc_wake(struct urel_osc_ctx *c)
{
	urel_waker_wake(&c->waker);
}

struct urel_osc_sleep_arg {
	struct urel_win *w;
	bool (*done)(struct urel_win *w, void *arg);
	void *arg;
};

static bool urel_osc_sleep_ready(void *p)
{
	const struct urel_osc_sleep_arg *s = p;

	return s->done(s->w, s->arg);
}

/*
 * Sleep on the device until something arrives for us, another thread
 * dispatches a completion of ours (urel_osc_wake()), or
 * UREL_OSC_SLEEP_MS. Returns 1 when done(), 0 to go on, or an error.
 */
static int urel_osc_sleep(struct urel_win *w, bool (*done)(struct urel_win *w, void *arg),
			  void *arg)
{
	struct urel_osc_sleep_arg s = { .w = w, .done = done, .arg = arg };

	return urel_waker_sleep(&w->ctx->waker, &w->ctx->lock, w->ctx->dev, urel_osc_sleep_ready,
				&s, UREL_OSC_SLEEP_MS);
}

struct urel_win *urel_osc_find(struct urel_osc_ctx *c, uint32_t id)
{
	for (struct urel_win *w = c->wins; w; w = w->next) {
		if (w->id == id)
			return w;
	}
	return NULL;
}

int urel_osc_rank_of(const struct urel_win *w, urel_peer_t peer)
{
	if (!peer)
		return -1;
	for (int r = 0; r < w->size; r++) {
		if (w->t[r].peer == peer)
			return r;
	}
	return -1;
}

static bool urel_osc_full(int ret)
{
	return ret == -EAGAIN || ret == -ENOBUFS;
}

/*
 * Send one message; when the queue or the staging area is full, progress
 * (which reclaims finished sends; callbacks may progress again) and retry.
 * Never called under c->lock.
 */
static int urel_osc_send_req(struct urel_osc_ctx *c, urel_peer_t peer, unsigned int chan,
			     unsigned int op, unsigned int flags, const struct urel_osc_wire *wire,
			     const void *data, size_t dlen, struct urel_request *req)
{
	struct urel_am_hdr h = urel_am_hdr(UREL_AM_OSC, op, flags, 0);
	struct urel_osc_wire le = *wire;
	struct iovec iov[3] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = &le, .iov_len = sizeof(le) },
		{ .iov_base = (void *)data, .iov_len = dlen },
	};
	int ret;

	le.win = htole32(wire->win);
	le.status = (int32_t)htole32((uint32_t)wire->status);
	le.cookie = htole64(wire->cookie);
	le.disp = htole64(wire->disp);
	le.count = htole64(wire->count);
	le.rkey = htole64(wire->rkey);
	le.base = htole64(wire->base);
	for (;;) {
		ret = urel_ep_sendv(c->ep, peer, chan, iov, dlen ? 3 : 2, 0, req, 0);
		if (!urel_osc_full(ret))
			return ret;
		if (urel_osc_nest >= UREL_OSC_NEST_MAX)
			return ret;
		urel_osc_nest++;
		ret = urel_ep_progress(c->ep, 16);
		urel_osc_nest--;
		if (ret < 0)
			return ret;
		if (!ret)
			urel_device_wait(c->dev, 1);
	}
}

int urel_osc_send(struct urel_osc_ctx *c, urel_peer_t peer, unsigned int chan, unsigned int op,
		  unsigned int flags, const struct urel_osc_wire *wire, const void *data,
		  size_t dlen)
{
	bool dead;
	int ret;

	pthread_mutex_lock(&c->lock);
	dead = urel_osc_is_dead(c, peer);
	pthread_mutex_unlock(&c->lock);
	if (dead)
		return UREL_WIN_ERR_PEER;
	ret = urel_osc_send_req(c, peer, chan, op, flags, wire, data, dlen, NULL);
	if (urel_osc_peer_fatal(ret)) {
		pthread_mutex_lock(&c->lock);
		urel_osc_mark_dead(c, peer);
		pthread_mutex_unlock(&c->lock);
		ret = UREL_WIN_ERR_PEER;
	}
	return ret;
}

uint64_t urel_osc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Whether a blocking call on @w may be waiting for target @r; under c->lock. */
static bool urel_osc_waits_on(const struct urel_win *w, int r)
{
	const struct urel_osc_target *t = &w->t[r];

	if (r == w->rank)
		return false;
	if (t->rdma_out || t->am_out || (t->in_access && !t->posts) ||
	    (t->in_exposure && !t->completes) || !t->region_done)
		return true;
	/* A lock refused (or failed) or released waits for nothing more. */
	if (t->lock && !t->lock_nocheck && !t->lock_status &&
	    ((!t->granted && !t->lazy) || (t->unlocking && !t->unlocked)))
		return true;
	for (const struct urel_osc_fetch *f = w->fetches; f; f = f->next) {
		if (f->target == r && !f->done)
			return true;
	}
	return false;
}

bool urel_osc_in_scope(const struct urel_win *w, int scope, int r)
{
	switch (scope) {
	case UREL_OSC_ALL:
		return true;
	case UREL_OSC_PSCW_ACCESS:
		return w->t[r].in_access;
	case UREL_OSC_PSCW_EXPOSURE:
		return w->t[r].in_exposure;
	}
	return r == scope;
}

/* The first and the last rank @scope may hold, for loops that test each. */
static void urel_osc_scope_range(const struct urel_win *w, int scope, int *first, int *end)
{
	*first = scope >= 0 ? scope : 0;
	*end = scope >= 0 ? scope + 1 : w->size;
}

/*
 * A peer of @scope that the call waits on died: the call fails rather than
 * wait forever, and what it will never answer is written off (this
 * failure reports it): accumulates to it, and fetches from it, whose
 * callers see their own failure. So later calls among the living complete.
 * RDMA operations need nothing: the kernel fails them all. Under c->lock.
 */
static bool urel_osc_waits_on_dead(struct urel_win *w, int scope)
{
	bool dead = false;
	int first, end;

	if (!w->ctx->ndead)
		return false;
	urel_osc_scope_range(w, scope, &first, &end);
	for (int r = first; r < end; r++) {
		if (!urel_osc_in_scope(w, scope, r) || !urel_osc_waits_on(w, r) ||
		    !urel_osc_is_dead(w->ctx, w->t[r].peer))
			continue;
		w->t[r].am_out = 0;
		for (struct urel_osc_fetch *f = w->fetches; f; f = f->next) {
			if (f->target == r && !f->done) {
				f->done = true;
				f->status = UREL_WIN_ERR_PEER;
			}
		}
		dead = true;
	}
	return dead;
}

/*
 * Ping @peer about window @win: if it fails, the peer is marked dead. One
 * at a time per peer: the kernel resends an unanswered ping until the peer
 * answers or is declared dead, so a second adds nothing (a peer that dies
 * would otherwise collect one per keepalive_ms). Not under c->lock.
 */
void urel_osc_ping(struct urel_osc_ctx *c, uint32_t win, urel_peer_t peer)
{
	struct urel_osc_wire wi = { .win = win };
	struct urel_osc_ping *p = calloc(1, sizeof(*p));
	bool go;
	int ret;

	if (!p)
		return; /* tried again next round */
	pthread_mutex_lock(&c->lock);
	go = urel_osc_ping_begin(c, peer);
	pthread_mutex_unlock(&c->lock);
	if (!go) {
		free(p);
		return;
	}
	p->req.complete = urel_osc_ping_done;
	p->gen = c->gen;
	p->peer = peer;
	ret = urel_osc_send_req(c, peer, UREL_CHAN_CMD, UREL_OSC_PING, 0, &wi, NULL, 0, &p->req);
	if (ret) {
		free(p);
		pthread_mutex_lock(&c->lock);
		urel_osc_unping(c, peer);
		if (urel_osc_peer_fatal(ret))
			urel_osc_mark_dead(c, peer);
		pthread_mutex_unlock(&c->lock);
	}
}

/* Every keepalive_ms, ping each live peer of @scope that @w waits on (failing: it is dead). */
static void urel_osc_keepalive(struct urel_win *w, int scope)
{
	struct urel_osc_ctx *c = w->ctx;
	struct urel_osc_wire wi = { .win = w->id };
	uint64_t now = urel_osc_now_ms();
	urel_peer_t *peers;
	bool due;
	int n = 0;

	pthread_mutex_lock(&c->lock);
	due = now - c->last_ping_ms >= c->keepalive_ms;
	if (due)
		c->last_ping_ms = now;
	pthread_mutex_unlock(&c->lock);
	if (!due)
		return;
	peers = calloc((size_t)w->size, sizeof(*peers));
	if (!peers)
		return;
	pthread_mutex_lock(&c->lock);
	for (int r = 0; r < w->size; r++) {
		if (urel_osc_in_scope(w, scope, r) && urel_osc_waits_on(w, r) &&
		    !urel_osc_is_dead(c, w->t[r].peer))
			peers[n++] = w->t[r].peer;
	}
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < n; i++)
		urel_osc_ping(c, wi.win, peers[i]);
	free(peers);
}

/* UREL_OSC_DEBUG: a blocking call waiting this long says what it waits for, on stderr. */
static void urel_osc_debug(struct urel_win *w, unsigned int sleeps)
{
	static int on = -1;

	if (on < 0)
		on = getenv("UREL_OSC_DEBUG") != NULL;
	if (!on || sleeps % 200)
		return;
	pthread_mutex_lock(&w->ctx->lock);
	fprintf(stderr,
		"urel_osc: rank %d win %u waiting: sync %d locks %u exposed %d dropped %llu\n",
		w->rank, w->id, w->sync.type, w->sync.locks, w->sync.exposed,
		(unsigned long long)w->ctx->dropped);
	for (int r = 0; r < w->size; r++) {
		const struct urel_osc_target *t = &w->t[r];

		fprintf(stderr,
			"urel_osc:   to %d: rdma %u am %u lock %d granted %d unlocked %d held %d "
			"posts %u completes %u access %d exposure %d dead %d\n",
			r, t->rdma_out, t->am_out, t->lock, t->granted, t->unlocked, t->held,
			t->posts, t->completes, t->in_access, t->in_exposure,
			urel_osc_is_dead(w->ctx, t->peer));
	}
	pthread_mutex_unlock(&w->ctx->lock);
}

static uint64_t urel_osc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * One more poll without news: false while the call should poll again
 * (spinning, then yielding the CPU between polls until c->spin_us after
 * the last news), true when it should sleep.
 */
static bool urel_osc_idle_poll(struct urel_osc_ctx *c, unsigned int *idle, uint64_t *since)
{
	unsigned int n = ++*idle;

	if (n < UREL_OSC_SPIN)
		return false;
	if (n == UREL_OSC_SPIN) {
		*since = urel_osc_now_us();
		return !c->spin_us;
	}
	if ((n - UREL_OSC_SPIN) % UREL_OSC_SPIN_CLOCK == 0 &&
	    urel_osc_now_us() - *since >= c->spin_us)
		return true;
	sched_yield();
	return false;
}

int urel_osc_wait_in(struct urel_win *w, int scope, bool (*done)(struct urel_win *w, void *arg),
		     void *arg)
{
	struct urel_osc_ctx *c = w->ctx;
	unsigned int idle = 0, sleeps = 0;
	bool ok, dead, slept = false;
	uint64_t since = 0;
	int n;

	/* Before the doorbell: what it brings back is this thread's to take. */
	urel_msg_app_waits(c->m);
	/* Puts posted without a doorbell (rma.c) leave now. */
	n = urel_ep_flush(c->ep);
	if (n < 0)
		return n;
	for (;;) {
		pthread_mutex_lock(&c->lock);
		ok = done(w, arg);
		dead = !ok && urel_osc_waits_on_dead(w, scope);
		pthread_mutex_unlock(&c->lock);
		if (ok)
			return 0;
		if (dead)
			return UREL_WIN_ERR_PEER;
		n = urel_msg_progress(c->m);
		if (n < 0)
			return n;
		if (n) {
			idle = 0;
			slept = false;
			continue;
		}
		/* Woken for nothing of ours: no new spin, back to sleep. */
		if (!slept && !urel_osc_idle_poll(c, &idle, &since))
			continue;
		urel_osc_debug(w, ++sleeps);
		urel_osc_keepalive(w, scope);
		slept = true;
		n = urel_osc_sleep(w, done, arg);
		if (n)
			return n > 0 ? 0 : n;
	}
}

int urel_osc_wait(struct urel_win *w, bool (*done)(struct urel_win *w, void *arg), void *arg)
{
	return urel_osc_wait_in(w, UREL_OSC_ALL, done, arg);
}

int urel_osc_wait_one(struct urel_win *w, int target, bool (*done)(struct urel_win *w, void *arg),
		      void *arg)
{
	return urel_osc_wait_in(w, target, done, arg);
}
