// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: the sender. Tiny and eager messages are
 * copied into the core's staging area at once, so a standard send completes
 * when posted; a synchronous one waits for the receiver's SACK. Above the
 * eager limit the buffer is registered for remote reads and only a
 * request-to-send travels; the send completes on the receiver's FIN.
 * A buffer too large to pin at once is registered piecewise (window.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "msg.h"

static struct urel_msg_req *urel_msg_find_send(struct urel_msg *m, urel_peer_t peer, uint64_t id)
{
	for (struct urel_msg_req *r = m->waiting.head; r; r = r->next) {
		if (r->id == id && r->peer == peer)
			return r;
	}
	return NULL;
}

/* Under m->lock. */
void urel_msg_send_done(struct urel_msg_req *r, int status)
{
	if (r->mr) {
		urel_mr_dereg(r->mr);
		r->mr = NULL;
	}
	urel_msg_win_release(r->m, r);
	r->st.error = status;
	urel_msg_complete(r);
}

void urel_msg_on_sack(struct urel_msg *m, urel_peer_t peer, uint64_t sreq)
{
	struct urel_msg_req *r = urel_msg_find_send(m, peer, sreq);

	if (!r || r->rndv) {
		m->dropped++;
		return;
	}
	urel_msg_list_del(&m->waiting, r);
	urel_msg_send_done(r, 0);
}

void urel_msg_on_fin(struct urel_msg *m, urel_peer_t peer, uint64_t sreq, int status)
{
	struct urel_msg_req *r = urel_msg_find_send(m, peer, sreq);

	if (!r || !r->rndv) {
		m->dropped++;
		return;
	}
	urel_msg_list_del(&m->waiting, r);
	/* A receive that was too small is the receiver's error, not ours. */
	urel_msg_send_done(r, status == -EMSGSIZE ? 0 : status);
	urel_msg_win_retry(m);
}

int urel_msg_send_ctl(struct urel_msg *m, urel_peer_t peer, unsigned int op, uint64_t sreq,
		      int status)
{
	unsigned char hdr[sizeof(struct urel_am_hdr) + 16];
	struct urel_am_hdr h = urel_am_hdr(UREL_AM_MSG, op, 0, 0);
	size_t len = sizeof(h) + 8;

	memcpy(hdr, &h, sizeof(h));
	urel_msg_put64(hdr + sizeof(h), sreq);
	if (op == UREL_MSG_OP_FIN) {
		urel_msg_put64(hdr + len, (uint64_t)(int64_t)status);
		len += 8;
	}
	return urel_msg_post(m, peer, UREL_CHAN_CMD, hdr, len, NULL, 0, NULL);
}

/* @peer failed: its SACK or FIN will never come. Under m->lock. */
void urel_msg_fail_sends(struct urel_msg *m, urel_peer_t peer, int err)
{
	struct urel_msg_req *r = m->waiting.head, *next;

	for (; r; r = next) {
		next = r->next;
		if (r->peer != peer)
			continue;
		urel_msg_list_del(&m->waiting, r);
		urel_msg_send_done(r, err);
	}
	urel_msg_win_retry(m);
}

static void urel_msg_send_init(struct urel_msg_req *r, urel_peer_t peer, size_t len, uint64_t tag,
			       uint64_t data)
{
	r->kind = UREL_MSG_REQ_SEND;
	r->peer = peer;
	r->st.peer = peer;
	r->st.tag = tag;
	r->st.len = len;
	r->st.data = data;
}

/* An eager message's header: @id names a synchronous send's request (0 for a standard one). */
static void urel_msg_eager_hdr(unsigned char hdr[UREL_MSG_EAGER_HDR], uint32_t seq, bool sync,
			       uint64_t tag, uint64_t id)
{
	struct urel_am_hdr h =
		urel_am_hdr(UREL_AM_MSG, UREL_MSG_OP_EAGER, sync ? UREL_MSG_F_SYNC : 0, seq);

	memcpy(hdr, &h, sizeof(h));
	urel_msg_put64(hdr + sizeof(h), tag);
	urel_msg_put64(hdr + sizeof(h) + 8, id);
}

static unsigned int urel_msg_eager_chan(const struct urel_msg *m, size_t len)
{
	return len <= m->attr.tiny_max ? UREL_CHAN_CMD : UREL_CHAN_DATA;
}

/*
 * A tiny or eager send to another process: the common case, kept apart
 * from the rendezvous and self paths so that it stays short. Its request
 * is a reaped one again, without a trip to malloc; a standard send is done
 * once posted, a synchronous one waits for the receiver's SACK.
 */
static int urel_msg_isend_eager(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
				uint64_t tag, uint64_t data, bool sync, struct urel_msg_req **reqp)
{
	unsigned char hdr[UREL_MSG_EAGER_HDR];
	struct urel_msg_peer *p;
	struct urel_msg_req *r;
	unsigned int chan;
	uint32_t seq;
	int ret;

	urel_msg_lock(&m->lock);
	r = urel_msg_req_alloc(m); /* linked already */
	if (!r) {
		urel_msg_unlock(&m->lock);
		return -ENOMEM;
	}
	urel_msg_send_init(r, peer, len, tag, data);
	p = urel_msg_peer(m, peer);
	if (!p) {
		ret = -ENOMEM;
		goto err;
	}
	if (sync) {
		r->id = ++m->next_id;
		urel_msg_list_add(&m->waiting, r);
	}
	seq = p->tx_seq++;
	urel_msg_eager_hdr(hdr, seq, sync, tag, r->id);
	chan = urel_msg_eager_chan(m, len);
	/*
	 * Nothing queued ahead of it and the peer alive: posted at once
	 * (urel_msg_post_to()'s common case, one call shorter). Otherwise, or
	 * when the core refuses it, urel_msg_post_to() queues it or fails it.
	 */
	if (!m->pend && !p->err &&
	    !urel_msg_post_now(m, peer, chan, hdr, sizeof(hdr), buf, len, data)) {
		if (!sync)
			urel_msg_complete(r);
		ret = 0;
	} else {
		ret = urel_msg_post_to(m, p, peer, chan, hdr, sizeof(hdr), buf, len, data,
				       sync ? NULL : r);
	}
	if (ret) {
		/* Refused outright (nothing queued after it): the sequence number is free again. */
		p->tx_seq = seq;
		urel_msg_list_del(&m->waiting, r);
		goto err;
	}
	urel_msg_unlock(&m->lock);
	*reqp = r;
	return 0;
err:
	urel_msg_req_forget(m, r);
	urel_msg_unlock(&m->lock);
	free(r);
	return ret;
}

/* Both public sends; not one calling the other, which would go through the PLT. */
static int urel_msg_isend_any(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
			      uint64_t tag, uint64_t data, unsigned int flags,
			      struct urel_msg_req **reqp)
{
	unsigned char hdr[UREL_MSG_RTS_HDR];
	bool sync = flags & UREL_MSG_SYNC;
	struct urel_msg_peer *p;
	struct urel_msg_req *r;
	struct urel_am_hdr h;
	uint32_t seq;
	int ret;

	if (!m || !reqp || peer == UREL_MSG_ANY_PEER || (!buf && len) || flags & ~UREL_MSG_SYNC)
		return -EINVAL;
	if (peer != UREL_MSG_SELF && len <= m->attr.eager_max)
		return urel_msg_isend_eager(m, peer, buf, len, tag, data, sync, reqp);
	/* A send to ourselves, or a rendezvous: its request is fresh and whole. */
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->m = m;
	r->tail_used = true;
	urel_msg_send_init(r, peer, len, tag, data);
	if (peer == UREL_MSG_SELF) {
		urel_msg_lock(&m->lock);
		ret = urel_msg_self_send(m, r, buf, len, tag, sync);
		if (!ret)
			urel_msg_req_link(m, r);
		urel_msg_unlock(&m->lock);
		if (ret) {
			free(r);
			return ret;
		}
		*reqp = r;
		return 0;
	}
	r->rndv = true;
	/*
	 * Too large to pin at once, or it did not fit under the memlock limit:
	 * the receiver asks for windows. Without a limit, -ENOMEM is a failed
	 * allocation, for the caller to retry.
	 */
	if (len <= m->rndv_win) {
		ret = urel_mr_reg(m->ep, (void *)buf, len, UREL_ACCESS_REMOTE_READ, &r->mr);
		if (ret && (ret != -ENOMEM || m->rndv_win == SIZE_MAX)) {
			free(r);
			return ret;
		}
	}
	if (!r->mr) {
		r->windowed = true;
		r->sbuf = buf;
	}
	urel_msg_lock(&m->lock);
	p = urel_msg_peer(m, peer);
	if (!p) {
		ret = -ENOMEM;
		goto err;
	}
	r->id = ++m->next_id;
	urel_msg_list_add(&m->waiting, r);
	seq = p->tx_seq++;
	h = urel_am_hdr(UREL_AM_MSG, UREL_MSG_OP_RTS,
			(sync ? UREL_MSG_F_SYNC : 0) | (r->windowed ? UREL_MSG_F_WIN : 0), seq);
	memcpy(hdr, &h, sizeof(h));
	urel_msg_put64(hdr + sizeof(h), tag);
	urel_msg_put64(hdr + sizeof(h) + 8, r->id);
	urel_msg_put64(hdr + sizeof(h) + 16, len);
	urel_msg_put64(hdr + sizeof(h) + 24, r->mr ? (uint64_t)urel_mr_rkey(r->mr) : 0);
	ret = urel_msg_post_imm(m, peer, UREL_CHAN_CMD, hdr, sizeof(hdr), NULL, 0, data, NULL);
	if (ret) {
		/* Refused outright (nothing queued after it): the sequence number is free again. */
		p->tx_seq = seq;
		urel_msg_list_del(&m->waiting, r);
		goto err;
	}
	urel_msg_req_link(m, r);
	urel_msg_unlock(&m->lock);
	*reqp = r;
	return 0;
err:
	urel_msg_req_forget(m, r);
	urel_msg_unlock(&m->lock);
	if (r->mr)
		urel_mr_dereg(r->mr);
	free(r);
	return ret;
}

/*
 * A standard send whose bytes leave @buf before it returns, with no request:
 * posted at once or not at all. -EAGAIN when it would have to wait (sends
 * queued ahead of it, the core's ring full) or is not an eager send to
 * another process: urel_msg_isend() takes those. Nothing is sent then, so
 * the caller's fallback keeps the order.
 */
UREL_API int urel_msg_inject_data(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
				  uint64_t tag, uint64_t data)
{
	unsigned char hdr[UREL_MSG_EAGER_HDR];
	struct urel_msg_peer *p;
	uint32_t seq;
	int ret;

	if (!m || peer == UREL_MSG_ANY_PEER || (!buf && len))
		return -EINVAL;
	if (peer == UREL_MSG_SELF || len > m->attr.eager_max)
		return -EAGAIN;
	urel_msg_lock(&m->lock);
	p = urel_msg_peer(m, peer);
	if (!p) {
		ret = -ENOMEM;
	} else if (p->err) {
		ret = p->err;
	} else if (m->pend) {
		ret = -EAGAIN;
	} else {
		seq = p->tx_seq++;
		urel_msg_eager_hdr(hdr, seq, false, tag, 0);
		ret = urel_msg_post_now(m, peer, urel_msg_eager_chan(m, len), hdr, sizeof(hdr), buf,
					len, data);
		if (ret) {
			/* Nothing went: the sequence number is free again. */
			p->tx_seq = seq;
			if (urel_msg_full(ret))
				ret = -EAGAIN;
			else if (urel_msg_peer_fatal(ret))
				urel_msg_peer_failed(m, peer, ret);
		}
	}
	urel_msg_unlock(&m->lock);
	return ret;
}

UREL_API int urel_msg_isend(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
			    uint64_t tag, unsigned int flags, struct urel_msg_req **reqp)
{
	return urel_msg_isend_any(m, peer, buf, len, tag, 0, flags, reqp);
}

UREL_API int urel_msg_isend_data(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
				 uint64_t tag, uint64_t data, unsigned int flags,
				 struct urel_msg_req **reqp)
{
	return urel_msg_isend_any(m, peer, buf, len, tag, data, flags, reqp);
}
