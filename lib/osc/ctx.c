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

#include "../group.h"
#include "osc.h"

/* Blocking calls poll this many times without news before they sleep. */
#define UREL_OSC_SPIN 200
#define UREL_OSC_SLEEP_MS 10
/* Nested progress while a send waits for room in a message handler. */
#define UREL_OSC_NEST_MAX 16
/* The progress thread's longest sleep on the device: how soon it sees the last free. */
#define UREL_OSC_THREAD_SLEEP_MS 20

static pthread_mutex_t urel_osc_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urel_osc_ctx *urel_osc_list;
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
 * it: it sleeps on the device until something arrives and drains it.
 */
static void *urel_osc_progress_main(void *arg)
{
	struct urel_osc_ctx *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		int n = urel_msg_progress(c->m);

		if (n < 0)
			break; /* the endpoint is gone; the application's calls say so */
		if (!n)
			urel_device_wait(c->dev, UREL_OSC_THREAD_SLEEP_MS);
	}
	return NULL;
}

int urel_osc_ctx_get(struct urel_group *g, struct urel_osc_ctx **cp)
{
	struct urel_ep *ep = urel_group_ep(g);
	struct urel_osc_ctx *c;
	int ret = 0;

	pthread_mutex_lock(&urel_osc_list_lock);
	for (c = urel_osc_list; c; c = c->next) {
		if (c->ep == ep) {
			c->refs++;
			goto out;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	c->ep = ep;
	c->m = urel_group_msg(g);
	c->refs = 1;
	pthread_mutex_init(&c->lock, NULL);
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
	if (urel_osc_thread_wanted()) {
		ret = -pthread_create(&c->thread, NULL, urel_osc_progress_main, c);
		if (ret) {
			urel_am_unregister(c->am, UREL_AM_OSC);
			urel_am_put(c->am);
			goto err;
		}
		c->thread_on = true;
	}
	c->next = urel_osc_list;
	urel_osc_list = c;
	goto out;
err:
	pthread_mutex_destroy(&c->lock);
	free(c);
out:
	pthread_mutex_unlock(&urel_osc_list_lock);
	if (!ret)
		*cp = c;
	return ret;
}

void urel_osc_ctx_put(struct urel_osc_ctx *c)
{
	struct urel_osc_ctx **pp;

	pthread_mutex_lock(&urel_osc_list_lock);
	if (--c->refs) {
		pthread_mutex_unlock(&urel_osc_list_lock);
		return;
	}
	for (pp = &urel_osc_list; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	pthread_mutex_unlock(&urel_osc_list_lock);
	if (c->thread_on) {
		__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
		pthread_join(c->thread, NULL);
	}
	urel_am_unregister(c->am, UREL_AM_OSC);
	urel_am_put(c->am);
	pthread_mutex_destroy(&c->lock);
	free(c);
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
int urel_osc_send(struct urel_osc_ctx *c, urel_peer_t peer, unsigned int chan, unsigned int op,
		  unsigned int flags, const struct urel_osc_wire *wire, const void *data,
		  size_t dlen)
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
		ret = urel_ep_sendv(c->ep, peer, chan, iov, dlen ? 3 : 2, 0, NULL, 0);
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
			"posts %u completes %u access %d exposure %d\n",
			r, t->rdma_out, t->am_out, t->lock, t->granted, t->unlocked, t->held,
			t->posts, t->completes, t->in_access, t->in_exposure);
	}
	pthread_mutex_unlock(&w->ctx->lock);
}

int urel_osc_wait(struct urel_win *w, bool (*done)(struct urel_win *w, void *arg), void *arg)
{
	struct urel_osc_ctx *c = w->ctx;
	unsigned int idle = 0, sleeps = 0;
	bool ok;
	int n;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		ok = done(w, arg);
		pthread_mutex_unlock(&c->lock);
		if (ok)
			return 0;
		n = urel_msg_progress(c->m);
		if (n < 0)
			return n;
		if (n) {
			idle = 0;
			continue;
		}
		if (++idle < UREL_OSC_SPIN)
			continue;
		urel_osc_debug(w, ++sleeps);
		n = urel_device_wait(c->dev, UREL_OSC_SLEEP_MS);
		if (n < 0 && n != -EINTR)
			return n;
	}
}
