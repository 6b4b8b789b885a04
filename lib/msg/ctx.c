// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: the context of one endpoint (limits, peers,
 * sends the core could not take yet) and the progress and blocking loops.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "msg.h"

#define UREL_MSG_TINY_DEFAULT 256U
#define UREL_MSG_EAGER_DEFAULT 16384U
#define UREL_MSG_RNDV_CHUNK_DEFAULT (256U * 1024)
#define UREL_MSG_SPIN_DEFAULT 200U
#define UREL_MSG_KEEPALIVE_DEFAULT 1000U
/* Sleep slices of a blocking call: short while sends wait for room. */
#define UREL_MSG_SLEEP_MS 50
#define UREL_MSG_RETRY_MS 1
/* Reaped requests a context keeps for reuse (UREL_MSG_REQ_CACHE). */
#define UREL_MSG_SPARE_MAX 32U
/* Longest a close waits for its last messages to be acknowledged. */
#define UREL_MSG_LINGER_MS 1000
/* The progress thread's longest sleep: how soon it sees a close. */
#define UREL_MSG_THREAD_SLEEP_MS 20

/* An environment override of @field; -EINVAL when it is not a number. */
static int urel_msg_env(const char *name, uint32_t *field)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || !*s || *field)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*field = (uint32_t)v;
	return 0;
}

/* Guards every sink's m, so a completion never reaches a closed context. */
static pthread_mutex_t urel_msg_sink_lock = PTHREAD_MUTEX_INITIALIZER;

void urel_msg_sink_get(struct urel_msg_sink *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void urel_msg_sink_put(struct urel_msg_sink *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(s);
}

/* The context an operation of @s belongs to, NULL if it closed; then urel_msg_sink_leave(). */
struct urel_msg *urel_msg_sink_enter(struct urel_msg_sink *s)
{
	pthread_mutex_lock(&urel_msg_sink_lock);
	return s->m;
}

/* The operation is over: drop its reference. */
void urel_msg_sink_leave(struct urel_msg_sink *s)
{
	pthread_mutex_unlock(&urel_msg_sink_lock);
	urel_msg_sink_put(s);
}

/* A send of ours finished; one that failed means its peer did. */
static void urel_msg_sent(struct urel_request *cr, const struct urel_completion *c)
{
	struct urel_msg_sink *s = (struct urel_msg_sink *)cr;
	struct urel_msg *m;

	if (!c->status) {
		urel_msg_sink_put(s);
		return;
	}
	m = urel_msg_sink_enter(s);
	if (m) {
		urel_msg_lock(&m->lock);
		urel_msg_peer_failed(m, c->peer, c->status);
		urel_msg_unlock(&m->lock);
	}
	urel_msg_sink_leave(s);
}

/*
 * Under AddressSanitizer a reused request would hide an application's use
 * of one it already completed: there, every reaped request is freed.
 */
#if defined(__SANITIZE_ADDRESS__)
#define UREL_MSG_SPARE_DEFAULT 0U
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UREL_MSG_SPARE_DEFAULT 0U
#endif
#endif
#ifndef UREL_MSG_SPARE_DEFAULT
#define UREL_MSG_SPARE_DEFAULT UREL_MSG_SPARE_MAX
#endif

/* The request cache's size, UREL_MSG_REQ_CACHE overriding the default. */
static int urel_msg_spare_max(unsigned int *max)
{
	const char *s = getenv("UREL_MSG_REQ_CACHE");
	unsigned long v;
	char *end;

	*max = UREL_MSG_SPARE_DEFAULT;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v > UREL_MSG_SPARE_MAX)
		return -EINVAL;
	*max = (unsigned int)v;
	return 0;
}

static int urel_msg_limits(struct urel_ep *ep, const struct urel_msg_attr *in,
			   struct urel_msg_attr *out)
{
	struct urel_ep_info info;
	uint32_t cmd_max, data_max;
	int ret;

	ret = urel_ep_query(ep, &info);
	if (ret)
		return ret;
	*out = in ? *in : (struct urel_msg_attr){ 0 };
	if (urel_msg_env("UREL_MSG_TINY_MAX", &out->tiny_max) ||
	    urel_msg_env("UREL_MSG_EAGER_MAX", &out->eager_max) ||
	    urel_msg_env("UREL_MSG_RNDV_CHUNK", &out->rndv_chunk) ||
	    urel_msg_env("UREL_MSG_SPIN", &out->spin) ||
	    urel_msg_env("UREL_MSG_KEEPALIVE_MS", &out->keepalive_ms) ||
	    urel_msg_env("UREL_MSG_PROGRESS_THREAD", &out->progress_thread))
		return -EINVAL;
	cmd_max = info.max_msg[UREL_CHAN_CMD] - UREL_MSG_EAGER_HDR;
	data_max = info.max_msg[UREL_CHAN_DATA] - UREL_MSG_EAGER_HDR;
	if (!out->tiny_max)
		out->tiny_max = UREL_MSG_TINY_DEFAULT < cmd_max ? UREL_MSG_TINY_DEFAULT : cmd_max;
	if (!out->eager_max)
		out->eager_max =
			UREL_MSG_EAGER_DEFAULT < data_max ? UREL_MSG_EAGER_DEFAULT : data_max;
	if (!out->rndv_chunk)
		out->rndv_chunk = UREL_MSG_RNDV_CHUNK_DEFAULT < info.staging_size / 4
					  ? UREL_MSG_RNDV_CHUNK_DEFAULT
					  : info.staging_size / 4;
	if (!out->spin)
		out->spin = UREL_MSG_SPIN_DEFAULT;
	if (!out->keepalive_ms)
		out->keepalive_ms = UREL_MSG_KEEPALIVE_DEFAULT;
	if (!out->progress_thread)
		out->progress_thread = 2;
	if (out->progress_thread > 2)
		return -EINVAL;
	/* Every size class must fit its channel; a chunk must fit the staging area. */
	if (out->tiny_max > cmd_max || out->eager_max > data_max ||
	    out->tiny_max > out->eager_max || out->rndv_chunk > info.staging_size)
		return -EINVAL;
	return 0;
}

/*
 * Progress while the application computes: sleep on the device, drain,
 * repeat; stand back while the application makes progress itself.
 */
static void *urel_msg_progress_main(void *arg)
{
	struct urel_msg *m = arg;
	struct urel_msg_watcher wt;

	urel_msg_bg_look(m, &wt);
	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		int n;

		if (urel_msg_bg_stand_back(m, &wt, false)) {
			__atomic_fetch_add(&m->standbacks, 1, __ATOMIC_RELAXED);
			continue;
		}
		n = urel_msg_progress_bg(m);
		if (n < 0)
			break; /* the endpoint is gone; the application's calls say so */
		if (!n)
			urel_msg_bg_sleep(m, &wt, m->dev, UREL_MSG_THREAD_SLEEP_MS);
	}
	return NULL;
}

UREL_API int urel_msg_open(struct urel_ep *ep, const struct urel_msg_attr *attr,
			   struct urel_msg **mp)
{
	struct urel_msg *m;
	int ret;

	if (!ep || !mp)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ep = ep;
	ret = urel_msg_limits(ep, attr, &m->attr);
	/* A progress thread would call on the endpoint beside its caller. */
	if (!ret && ep->serial && m->attr.progress_thread == 1)
		ret = -EINVAL;
	if (!ret)
		ret = urel_msg_standback_us(&m->standback_us);
	if (!ret)
		ret = urel_msg_window_size(&m->rndv_win);
	if (!ret)
		ret = urel_msg_spare_max(&m->spare_max);
	if (ret)
		goto err_free;
	m->sink = calloc(1, sizeof(*m->sink));
	if (!m->sink) {
		ret = -ENOMEM;
		goto err_free;
	}
	m->sink->r.complete = urel_msg_sent;
	m->sink->m = m;
	m->sink->refs = 1;
	ret = urel_match_init(&m->match);
	if (ret)
		goto err_free;
	urel_waker_init(&m->waker);
	urel_msg_bg_init(m);
	m->lock = (struct urel_msg_lock){ 0 };
	ret = urel_am_get(ep, &m->am);
	if (ret)
		goto err_match;
	m->dev = urel_am_device(m->am);
	ret = urel_am_register(m->am, UREL_AM_MSG, urel_msg_on_am, m);
	if (ret)
		goto err_am;
	if (m->attr.progress_thread == 1) {
		ret = -pthread_create(&m->thread, NULL, urel_msg_progress_main, m);
		if (ret)
			goto err_reg;
	}
	urel_msg_pins_join(m);
	*mp = m;
	return 0;
err_reg:
	urel_am_unregister(m->am, UREL_AM_MSG);
err_am:
	urel_am_put(m->am);
err_match:
	urel_match_fini(&m->match);
	urel_msg_bg_fini(m);
	urel_waker_fini(&m->waker);
err_free:
	free(m->sink);
	free(m);
	return ret;
}

UREL_API int urel_msg_close(struct urel_msg *m)
{
	if (!m)
		return -EINVAL;
	urel_msg_pins_leave(m);
	if (m->attr.progress_thread == 1) {
		__atomic_store_n(&m->stop, true, __ATOMIC_RELEASE);
		pthread_join(m->thread, NULL);
	}
	urel_am_unregister(m->am, UREL_AM_MSG);
	/* An endpoint the kernel gave up on finishes nothing more: free what is left. */
	urel_msg_drain(m);
	pthread_mutex_lock(&urel_msg_sink_lock);
	m->sink->m = NULL;
	pthread_mutex_unlock(&urel_msg_sink_lock);
	urel_msg_sink_put(m->sink);
	urel_am_put(m->am);
	urel_msg_lock(&m->lock);
	while (m->pend) {
		struct urel_msg_pending *p = m->pend;

		m->pend = p->next;
		free(p);
	}
	/* Every request not freed, reaped, spare or neither, is on the live list. */
	m->reaped = NULL;
	m->spare = NULL;
	m->nspare = 0;
	m->waiting.head = m->waiting.tail = NULL;
	urel_msg_free_recvs(m);
	while (m->live) {
		struct urel_msg_req *r = m->live;

		urel_msg_req_unlink(m, r);
		if (r->mr)
			urel_mr_dereg(r->mr);
		if (r->kind == UREL_MSG_REQ_SEND)
			urel_msg_win_release(m, r);
		/* A read still out keeps its request: the get's completion frees it. */
		if (!r->gets)
			free(r);
	}
	for (uint32_t i = 0; i < m->npeers; i++) {
		if (!m->peers[i])
			continue;
		while (m->peers[i]->early) {
			struct urel_msg_early *e = m->peers[i]->early;

			m->peers[i]->early = e->next;
			free(e);
		}
		free(m->peers[i]);
	}
	free(m->peers);
	urel_msg_unlock(&m->lock);
	urel_match_fini(&m->match);
	urel_msg_bg_fini(m);
	urel_waker_fini(&m->waker);
	free(m);
	return 0;
}

UREL_API int urel_msg_query(const struct urel_msg *m, struct urel_msg_attr *attr)
{
	if (!m || !attr)
		return -EINVAL;
	*attr = m->attr;
	return 0;
}

UREL_API int urel_msg_rndv_stats(struct urel_msg *m, struct urel_msg_rndv_stats *st)
{
	if (!m || !st)
		return -EINVAL;
	urel_msg_lock(&m->lock);
	*st = (struct urel_msg_rndv_stats){
		.windows = m->win_count,
		.window_bytes = m->win_bytes,
		.pin_waits = m->pin_waits,
		.failures = m->pin_failures,
	};
	urel_msg_unlock(&m->lock);
	urel_msg_pins_usage(&st->pinned_bytes, &st->pinned_peak);
	return 0;
}

/* urel_msg_peer() when @peer has no state yet: grow the table, allocate it. */
struct urel_msg_peer *urel_msg_peer_add(struct urel_msg *m, urel_peer_t peer)
{
	if (!peer)
		return NULL;
	if (peer >= m->npeers) {
		uint32_t n = m->npeers ? m->npeers : 16;
		struct urel_msg_peer **grown;

		while (n <= peer)
			n *= 2;
		grown = realloc(m->peers, n * sizeof(*grown));
		if (!grown)
			return NULL;
		memset(grown + m->npeers, 0, (n - m->npeers) * sizeof(*grown));
		m->peers = grown;
		m->npeers = n;
	}
	if (!m->peers[peer])
		m->peers[peer] = calloc(1, sizeof(struct urel_msg_peer));
	return m->peers[peer];
}

void urel_msg_list_add(struct urel_msg_list *l, struct urel_msg_req *r)
{
	r->next = NULL;
	r->prev = l->tail;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	r->listed = true;
}

void urel_msg_list_del(struct urel_msg_list *l, struct urel_msg_req *r)
{
	if (!r->listed)
		return;
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->next = r->prev = NULL;
	r->listed = false;
}

/* Keep the requests reaped since the last call as spares, free the rest; under m->lock. */
static void urel_msg_collect(struct urel_msg *m)
{
	struct urel_msg_req *r = __atomic_exchange_n(&m->reaped, NULL, __ATOMIC_ACQUIRE), *next;

	for (; r; r = next) {
		next = r->rnext;
		if (m->nspare >= m->spare_max) {
			urel_msg_req_unlink(m, r);
			free(r);
			continue;
		}
		r->rnext = m->spare;
		m->spare = r;
		m->nspare++;
	}
}

static bool urel_msg_req_linked(const struct urel_msg *m, const struct urel_msg_req *r)
{
	return r->lprev || m->live == r;
}

/* Put @r on the live list, unless it is there already (a spare reused). Under m->lock. */
void urel_msg_req_link(struct urel_msg *m, struct urel_msg_req *r)
{
	/* Every new request frees the reaped ones, however it was allocated. */
	if (__atomic_load_n(&m->reaped, __ATOMIC_RELAXED))
		urel_msg_collect(m);
	if (urel_msg_req_linked(m, r))
		return;
	r->lprev = NULL;
	r->lnext = m->live;
	if (m->live)
		m->live->lprev = r;
	m->live = r;
}

void urel_msg_req_unlink(struct urel_msg *m, struct urel_msg_req *r)
{
	if (r->lprev)
		r->lprev->lnext = r->lnext;
	else
		m->live = r->lnext;
	if (r->lnext)
		r->lnext->lprev = r->lprev;
	r->lnext = r->lprev = NULL;
}

/* A request handed out and never linked (an error path) is freed by its caller. Under m->lock. */
void urel_msg_req_forget(struct urel_msg *m, struct urel_msg_req *r)
{
	if (urel_msg_req_linked(m, r))
		urel_msg_req_unlink(m, r);
}

/*
 * What memset() would do to the fields before rndv (the rest is rendezvous
 * state, still zero after a tiny or eager message), in fixed-size stores:
 * a length chosen at run time costs a string instruction per 8 bytes.
 */
static void urel_msg_req_clear_head(struct urel_msg_req *r)
{
	r->e = (struct urel_match_entry){ 0 };
	r->next = r->prev = NULL;
	r->kind = 0;
	r->done = false;
	r->listed = false;
	r->st = (struct urel_msg_status){ 0 };
	r->id = 0;
	r->peer = 0;
	r->buf = NULL;
	r->cap = 0;
}
/* A field added before rndv must be cleared above too. */
_Static_assert(offsetof(struct urel_msg_req, cap) + sizeof(size_t) ==
		       offsetof(struct urel_msg_req, rndv),
	       "urel_msg_req_clear_head() covers the fields before rndv");

/*
 * A zeroed request of @m, on the live list already (a spare reused stays
 * there; a new one is put there): the caller need not link it, and on an
 * error path forgets and frees it. Reaped requests become spares only
 * when none is left, not at every allocation. Under m->lock.
 */
struct urel_msg_req *urel_msg_req_alloc(struct urel_msg *m)
{
	struct urel_msg_req *r;

	if (!m->spare && __atomic_load_n(&m->reaped, __ATOMIC_RELAXED))
		urel_msg_collect(m);
	r = m->spare;
	if (r) {
		m->spare = r->rnext;
		m->nspare--;
		if (r->tail_used)
			memset(r, 0, offsetof(struct urel_msg_req, lnext));
		else
			urel_msg_req_clear_head(r);
		r->m = m;
		return r;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->m = m;
	urel_msg_req_link(m, r);
	return r;
}

/*
 * The application is done with @r (reaped): no lock, it waits on the
 * reaped stack for the next allocation (or close) to unlink it. Without a
 * cache it is freed now, so that any later use of it is a use after free.
 */
void urel_msg_req_release(struct urel_msg *m, struct urel_msg_req *r)
{
	struct urel_msg_req *head;

	if (!m->spare_max) {
		urel_msg_lock(&m->lock);
		urel_msg_req_unlink(m, r);
		urel_msg_unlock(&m->lock);
		free(r);
		return;
	}
	head = __atomic_load_n(&m->reaped, __ATOMIC_RELAXED);
	do
		r->rnext = head;
	while (!__atomic_compare_exchange_n(&m->reaped, &head, r, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

/* Under m->lock, after a change a blocking call may wait for: wake the sleeping ones. */
void urel_msg_wake(struct urel_msg *m)
{
	urel_waker_wake(&m->waker);
}

/* A message larger than a descriptor holds: gathered into the staging area. */
static int urel_msg_post_staged(struct urel_msg *m, urel_peer_t peer, unsigned int chan,
				const void *hdr, size_t hlen, const void *data, size_t dlen,
				uint64_t imm)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)hdr, .iov_len = hlen },
		{ .iov_base = (void *)data, .iov_len = dlen },
	};
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.peer = peer,
		.imm = imm,
		.len = (uint32_t)(hlen + dlen),
	};
	struct urel_payload pl = { .iov = iov, .iovcnt = dlen ? 2 : 1 };

	return urel_sq_post(m->ep, chan, &sqe, &pl, &m->sink->r, NULL, 0);
}

/*
 * Hand a message to the core now; its error as the core's (nothing posted
 * then). The caller queues or fails it (urel_msg_post_to()). Under m->lock.
 */
int urel_msg_post_now(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		      size_t hlen, const void *data, size_t dlen, uint64_t imm)
{
	int ret;

	/*
	 * urel_ep_sendv() without its checks of the arguments: the limits
	 * (urel_msg_limits()) keep every message of ours within its channel's
	 * max_msg. Only the peer may be unknown to the endpoint.
	 */
	if (!urel_av_has(m->ep, peer))
		return -ENXIO;
	urel_msg_sink_get(m->sink);
	/*
	 * A tiny message fits in the descriptor with its header: written
	 * straight into the ring slot, no descriptor copied, no gather list.
	 */
	if (hlen + dlen <= UREL_INLINE_MAX)
		ret = urel_sq_send_inline(m->ep, chan, peer, imm, hdr, hlen, data, dlen,
					  &m->sink->r);
	else
		ret = urel_msg_post_staged(m, peer, chan, hdr, hlen, data, dlen, imm);
	if (ret)
		urel_msg_sink_put(m->sink);
	return ret;
}

int urel_msg_post(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		  size_t hlen, const void *data, size_t dlen, struct urel_msg_req *done_req)
{
	return urel_msg_post_imm(m, peer, chan, hdr, hlen, data, dlen, 0, done_req);
}

int urel_msg_post_imm(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		      size_t hlen, const void *data, size_t dlen, uint64_t imm,
		      struct urel_msg_req *done_req)
{
	return urel_msg_post_to(m, peer < m->npeers ? m->peers[peer] : NULL, peer, chan, hdr, hlen,
				data, dlen, imm, done_req);
}

/*
 * Post now, or queue behind sends already waiting for room; under m->lock.
 * @pp is @peer's state, if it has any (a sender has looked it up already).
 */
int urel_msg_post_to(struct urel_msg *m, struct urel_msg_peer *pp, urel_peer_t peer,
		     unsigned int chan, const void *hdr, size_t hlen, const void *data, size_t dlen,
		     uint64_t imm, struct urel_msg_req *done_req)
{
	struct urel_msg_pending *p;
	int ret;

	if (pp && pp->err)
		return pp->err;
	/* The common case straight from the caller's header: no copy unless it must wait. */
	if (!m->pend) {
		ret = urel_msg_post_now(m, peer, chan, hdr, hlen, data, dlen, imm);
		if (!ret) {
			if (done_req)
				urel_msg_complete(done_req);
			return 0;
		}
		if (urel_msg_peer_fatal(ret))
			urel_msg_peer_failed(m, peer, ret);
		if (!urel_msg_full(ret))
			return ret;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = (struct urel_msg_pending){ .peer = peer,
					.chan = chan,
					.hlen = hlen,
					.data = data,
					.dlen = dlen,
					.imm = imm,
					.done_req = done_req };
	memcpy(p->hdr, hdr, hlen);
	if (m->pend_tail)
		m->pend_tail->next = p;
	else
		m->pend = p;
	m->pend_tail = p;
	return 0;
}

static void urel_msg_flush_pending(struct urel_msg *m)
{
	while (m->pend) {
		struct urel_msg_pending *p = m->pend;
		int ret = urel_msg_post_now(m, p->peer, p->chan, p->hdr, p->hlen, p->data, p->dlen,
					    p->imm);

		if (urel_msg_full(ret))
			break;
		m->pend = p->next;
		if (!m->pend)
			m->pend_tail = NULL;
		if (urel_msg_peer_fatal(ret))
			urel_msg_peer_failed(m, p->peer, ret);
		if (p->done_req) {
			p->done_req->st.error = ret;
			urel_msg_complete(p->done_req);
		}
		free(p);
	}
}

/* Errors of a send or read that mean the peer is gone for good. */
bool urel_msg_peer_fatal(int err)
{
	return err == -ETIMEDOUT || err == -EHOSTUNREACH || err == -ECONNRESET || err == -ECANCELED;
}

/*
 * @peer failed: a message to it was lost, so its stream is broken for good.
 * Everything that waits on it completes with @err, and so do receives from
 * any source (the message they wait for may have been the peer's); later
 * sends to it and receives naming it fail at once. Under m->lock.
 */
void urel_msg_peer_failed(struct urel_msg *m, urel_peer_t peer, int err)
{
	struct urel_msg_pending **pp = &m->pend, *p;
	struct urel_msg_peer *mp = urel_msg_peer(m, peer);

	if (!mp || mp->err)
		return;
	mp->err = err;
	m->peers_failed++;
	m->pend_tail = NULL;
	while ((p = *pp)) {
		if (p->peer != peer) {
			m->pend_tail = p;
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		if (p->done_req) {
			p->done_req->st.error = err;
			urel_msg_complete(p->done_req);
		}
		free(p);
	}
	urel_msg_fail_sends(m, peer, err);
	urel_msg_fail_recvs(m, peer, err);
}

/* Held arrivals that were due when memory ran out get another try. Under m->lock. */
static void urel_msg_retry_early(struct urel_msg *m)
{
	if (!m->early_stalled)
		return;
	m->early_stalled = false;
	for (urel_peer_t i = 1; i < m->npeers; i++) {
		if (m->peers[i])
			urel_msg_release_early(m, i, m->peers[i]);
	}
}

static uint64_t urel_msg_clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t urel_msg_now_ms(void)
{
	return urel_msg_clock_ms(CLOCK_MONOTONIC);
}

static bool urel_msg_waits_on(const struct urel_msg *m, urel_peer_t peer)
{
	for (const struct urel_msg_req *r = m->waiting.head; r; r = r->next) {
		if (r->peer == peer)
			return true;
	}
	for (const struct urel_msg_req *r = m->reading.head; r; r = r->next) {
		if (r->st.peer == peer)
			return true;
	}
	return false;
}

/*
 * A request waiting on a peer that died would wait forever if nothing is
 * sent to it: the kernel finds a dead peer only by its missing ACKs. So
 * every keepalive_ms, each peer something waits on gets a PING. Under m->lock.
 */
static void urel_msg_keepalive(struct urel_msg *m, uint64_t now)
{
	if (now - m->last_ping_ms < m->attr.keepalive_ms)
		return;
	__atomic_store_n(&m->last_ping_ms, now, __ATOMIC_RELAXED);
	for (urel_peer_t i = 1; i < m->npeers; i++) {
		struct urel_msg_peer *pp = m->peers[i];

		if (!pp || pp->err || (!pp->posted && !urel_msg_waits_on(m, i)))
			continue;
		if (urel_msg_send_ctl(m, i, UREL_MSG_OP_PING, 0, 0))
			m->dropped++;
		else
			m->keepalives++;
	}
}

/*
 * Whether a progress pass has work of its own beyond the core's: read
 * without the lock, as a hint. What it misses (a write racing the read) the
 * next pass sees, and every loop that waits on it passes again.
 */
static bool urel_msg_idle(const struct urel_msg *m, uint64_t now)
{
	return !__atomic_load_n(&m->pend, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&m->reading.head, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&m->early_stalled, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&m->pin_again, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&m->pin_waiters, __ATOMIC_RELAXED) &&
	       now - __atomic_load_n(&m->last_ping_ms, __ATOMIC_RELAXED) < m->attr.keepalive_ms;
}

UREL_API int urel_msg_progress(struct urel_msg *m)
{
	if (!m)
		return -EINVAL;
	return urel_msg_progress_one(m, false);
}

/*
 * The layer's own work of a pass (pending sends, reads, windows,
 * keepalives), when urel_msg_idle() saw some. Kept out of urel_msg_pass()
 * so that a pass that finds nothing saves no registers for it.
 */
static __attribute__((noinline)) void urel_msg_pass_work(struct urel_msg *m, uint64_t now,
							 bool help)
{
	unsigned long gen;

	urel_msg_lock(&m->lock);
	urel_msg_retry_early(m);
	urel_msg_flush_pending(m);
	urel_msg_pump(m);
	/* Another context (or an allocation) may have left room since the last try. */
	gen = urel_msg_pins_gen();
	if (m->pin_again || (m->pin_waiters && gen != m->pin_seen)) {
		m->pin_again = false;
		m->pin_seen = gen;
		m->pin_retry = true;
		urel_msg_win_retry(m);
	}
	urel_msg_keepalive(m, now);
	help = help && m->pin_waiters;
	urel_msg_unlock(&m->lock);
	if (help)
		urel_msg_pins_help(m);
}

/*
 * One progress pass. With @help (blocking calls, whose caller cannot
 * progress anything else meanwhile), also one of each context holding
 * windows while sends of ours wait for pinned memory (pins.c).
 */
int urel_msg_pass(struct urel_msg *m, bool help)
{
	uint64_t now;
	int n = 0;

	/*
	 * A busy poll mostly finds the rings empty: then no call into the core
	 * (which also says what no endpoint is).
	 */
	if (!m->ep || !urel_ep_quiet(m->ep))
		n = urel_ep_progress(m->ep, 0);
	/*
	 * Every call asks for the time: the coarse clock is read without a
	 * system call even where the precise one needs one (a VM without a
	 * stable TSC), and a tick's resolution is plenty for keepalive_ms.
	 */
	now = urel_msg_clock_ms(CLOCK_MONOTONIC_COARSE);
	/* A tiny message's poll loop mostly finds nothing to do: no lock then. */
	if (!urel_msg_idle(m, now))
		urel_msg_pass_work(m, now, help);
	return n;
}

int urel_msg_progress_bg(struct urel_msg *m)
{
	return urel_msg_pass(m, false);
}

/*
 * Progress until the kernel finished every send and read of ours, for at
 * most UREL_MSG_LINGER_MS: a peer that closed right after it received our
 * last message may never acknowledge it. Returns 0, -ETIMEDOUT when sends
 * or reads were still out, or the error that stopped the endpoint.
 */
int urel_msg_drain(struct urel_msg *m)
{
	uint64_t start = urel_msg_now_ms();

	for (;;) {
		bool busy;
		int n;

		/* No new reads: a receive still reading stays unfinished. */
		urel_msg_lock(&m->lock);
		urel_msg_flush_pending(m);
		busy = m->pend || m->gets || __atomic_load_n(&m->sink->refs, __ATOMIC_ACQUIRE) > 1;
		urel_msg_unlock(&m->lock);
		if (!busy)
			return 0;
		if (urel_msg_now_ms() - start >= UREL_MSG_LINGER_MS)
			return -ETIMEDOUT;
		n = urel_ep_progress(m->ep, 0);
		if (n < 0)
			return n;
		if (!n) {
			n = urel_device_wait(m->dev, UREL_MSG_RETRY_MS);
			if (n < 0 && n != -EINTR)
				return n;
		}
	}
}

/* Progress until @ready (called under m->lock) says so: spin a while, then sleep on the fd. */
int urel_msg_block(struct urel_msg *m, bool (*ready)(void *), void *arg)
{
	unsigned int idle = 0;
	bool done, stalled;
	int n;

	urel_msg_app_waits(m);
	for (;;) {
		urel_msg_lock(&m->lock);
		done = ready(arg);
		/* Waiting for another context's windows: its release wakes no fd of ours. */
		stalled = m->pend || m->reading.head || m->pin_waiters;
		urel_msg_unlock(&m->lock);
		if (done)
			return 0;
		n = urel_msg_progress_one(m, true);
		if (n < 0)
			return n;
		if (n) {
			idle = 0;
			continue;
		}
		if (++idle < m->attr.spin)
			continue;
		n = urel_waker_sleep_with(&m->waker, urel_msg_lock_fn, urel_msg_unlock_fn, &m->lock,
					  m->dev, ready, arg,
					  stalled ? UREL_MSG_RETRY_MS : UREL_MSG_SLEEP_MS);
		if (n)
			return n < 0 ? n : 0;
	}
}
