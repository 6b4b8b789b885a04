// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: the context of one endpoint (limits, peers,
 * sends the core could not take yet) and the progress and blocking loops.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "msg.h"

#define UREL_MSG_TINY_DEFAULT 256U
#define UREL_MSG_EAGER_DEFAULT 16384U
#define UREL_MSG_RNDV_CHUNK_DEFAULT (256U * 1024)
#define UREL_MSG_SPIN_DEFAULT 200U
/* Sleep slices of a blocking call: short while sends wait for room. */
#define UREL_MSG_SLEEP_MS 50
#define UREL_MSG_RETRY_MS 1

void urel_msg_put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

uint64_t urel_msg_get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

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
	    urel_msg_env("UREL_MSG_SPIN", &out->spin))
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
	/* Every size class must fit its channel; a chunk must fit the staging area. */
	if (out->tiny_max > cmd_max || out->eager_max > data_max ||
	    out->tiny_max > out->eager_max || out->rndv_chunk > info.staging_size)
		return -EINVAL;
	return 0;
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
	if (ret)
		goto err_free;
	ret = urel_match_init(&m->match);
	if (ret)
		goto err_free;
	pthread_mutex_init(&m->lock, NULL);
	ret = urel_am_get(ep, &m->am);
	if (ret)
		goto err_match;
	m->dev = urel_am_device(m->am);
	ret = urel_am_register(m->am, UREL_AM_MSG, urel_msg_on_am, m);
	if (ret)
		goto err_am;
	*mp = m;
	return 0;
err_am:
	urel_am_put(m->am);
err_match:
	pthread_mutex_destroy(&m->lock);
	urel_match_fini(&m->match);
err_free:
	free(m);
	return ret;
}

UREL_API int urel_msg_close(struct urel_msg *m)
{
	if (!m)
		return -EINVAL;
	urel_am_unregister(m->am, UREL_AM_MSG);
	urel_am_put(m->am);
	pthread_mutex_lock(&m->lock);
	while (m->pend) {
		struct urel_msg_pending *p = m->pend;

		m->pend = p->next;
		free(p);
	}
	urel_msg_free_sends(m);
	urel_msg_free_recvs(m);
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
	pthread_mutex_unlock(&m->lock);
	urel_match_fini(&m->match);
	pthread_mutex_destroy(&m->lock);
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

struct urel_msg_peer *urel_msg_peer(struct urel_msg *m, urel_peer_t peer)
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
	r->prev = NULL;
	r->next = l->head;
	if (l->head)
		l->head->prev = r;
	l->head = r;
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
	r->next = r->prev = NULL;
	r->listed = false;
}

void urel_msg_complete(struct urel_msg_req *r)
{
	r->done = true;
}

static bool urel_msg_full(int ret)
{
	return ret == -EAGAIN || ret == -ENOBUFS;
}

static int urel_msg_post_now(struct urel_msg *m, const struct urel_msg_pending *p)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)p->hdr, .iov_len = p->hlen },
		{ .iov_base = (void *)p->data, .iov_len = p->dlen },
	};

	return urel_ep_sendv(m->ep, p->peer, p->chan, iov, p->dlen ? 2 : 1, p->imm, NULL, 0);
}

int urel_msg_post(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		  size_t hlen, const void *data, size_t dlen, struct urel_msg_req *done_req)
{
	return urel_msg_post_imm(m, peer, chan, hdr, hlen, data, dlen, 0, done_req);
}

/* Post now, or queue behind sends already waiting for room; under m->lock. */
int urel_msg_post_imm(struct urel_msg *m, urel_peer_t peer, unsigned int chan, const void *hdr,
		      size_t hlen, const void *data, size_t dlen, uint64_t imm,
		      struct urel_msg_req *done_req)
{
	struct urel_msg_pending tmp = { .peer = peer,
					.chan = chan,
					.hlen = hlen,
					.data = data,
					.dlen = dlen,
					.imm = imm,
					.done_req = done_req };
	struct urel_msg_pending *p;
	int ret;

	memcpy(tmp.hdr, hdr, hlen);
	if (!m->pend) {
		ret = urel_msg_post_now(m, &tmp);
		if (!ret) {
			if (done_req)
				urel_msg_complete(done_req);
			return 0;
		}
		if (!urel_msg_full(ret))
			return ret;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	*p = tmp;
	p->next = NULL;
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
		int ret = urel_msg_post_now(m, p);

		if (urel_msg_full(ret))
			break;
		if (p->done_req) {
			p->done_req->st.error = ret;
			urel_msg_complete(p->done_req);
		}
		m->pend = p->next;
		if (!m->pend)
			m->pend_tail = NULL;
		free(p);
	}
}

UREL_API int urel_msg_progress(struct urel_msg *m)
{
	int n;

	if (!m)
		return -EINVAL;
	n = urel_ep_progress(m->ep, 0);
	pthread_mutex_lock(&m->lock);
	urel_msg_flush_pending(m);
	urel_msg_pump(m);
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* Progress until @ready (called under m->lock) says so: spin a while, then sleep on the fd. */
int urel_msg_block(struct urel_msg *m, bool (*ready)(void *), void *arg)
{
	unsigned int idle = 0;
	bool done, stalled;
	int n;

	for (;;) {
		pthread_mutex_lock(&m->lock);
		done = ready(arg);
		stalled = m->pend || m->reading.head;
		pthread_mutex_unlock(&m->lock);
		if (done)
			return 0;
		n = urel_msg_progress(m);
		if (n < 0)
			return n;
		if (n) {
			idle = 0;
			continue;
		}
		if (++idle < m->attr.spin)
			continue;
		n = urel_device_wait(m->dev, stalled ? UREL_MSG_RETRY_MS : UREL_MSG_SLEEP_MS);
		if (n < 0 && n != -EINTR)
			return n;
	}
}
