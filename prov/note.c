// SPDX-License-Identifier: MIT
/*
 * urel provider: notices of writes with remote CQ data (fi_writedata,
 * fi_inject_writedata, fi_writemsg with FI_REMOTE_CQ_DATA). The module's
 * puts carry no immediate data to the target, so such a write is its puts
 * followed by a message of ours, the notice: the data in the message's
 * immediate field, the written ranges in its payload, under
 * UREL_FI_NOTE_BITS.
 *
 * Why the target never reports a write before its bytes are there: puts
 * travel on the data channel and the notice is made longer than the msg
 * layer's tiny_max, which puts an eager message on the data channel too
 * (usnicrel_msg.h); it is posted only after the last piece of the write.
 * The module sends a channel's requests to a peer in the order they were
 * posted and delivers them in sequence order, executing a put in its
 * receive path as it is delivered; so the notice reaches the target's
 * receive ring after every byte of the write is in the target's memory. Where
 * the limits do not allow a notice on the data channel (tiny_max not below
 * eager_max), it is sent when the puts completed, i.e. were applied.
 *
 * The target keeps one receive of its own posted for notices; application
 * receives never match them. A notice is reported only if the module would
 * have taken the write (mr.c): a write it refused is not announced.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

/* Payload: the count of ranges, then key, offset and length of each. */
#define UREL_FI_NOTE_PAYLOAD (8 + UREL_FI_IOV_LIMIT * 24)
/* The receive buffer: longer notices are cut (their payload comes first). */
#define UREL_FI_NOTE_RX 1024
/* Notices taken per progress call. */
#define UREL_FI_NOTE_BATCH 64

static void urel_fi_put64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint64_t urel_fi_get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static int urel_fi_note_post(struct urel_fi_ep *ep)
{
	return urel_msg_irecv(ep->m, UREL_MSG_ANY_PEER, ep->note_buf, UREL_FI_NOTE_RX,
			      UREL_FI_NOTE_BITS, 0, &ep->note_rx);
}

/* The notice's length, and the receive for peers' notices (endpoints with FI_RMA). */
int urel_fi_note_open(struct urel_fi_ep *ep)
{
	struct urel_msg_attr a;
	int ret;

	if (!(ep->caps & FI_RMA))
		return 0;
	ret = urel_msg_query(ep->m, &a);
	if (ret)
		return ret;
	ep->note_len =
		a.tiny_max + 1 > UREL_FI_NOTE_PAYLOAD ? a.tiny_max + 1 : UREL_FI_NOTE_PAYLOAD;
	if (ep->note_len > a.eager_max) {
		ep->note_len = UREL_FI_NOTE_PAYLOAD;
		ep->note_after_put = true;
		UREL_FI_INFO(FI_LOG_EP_CTRL,
			     "eager limit %u: notices of writes with CQ data wait for their puts\n",
			     a.eager_max);
	}
	if (!(ep->caps & FI_REMOTE_WRITE))
		return 0;
	ep->note_buf = malloc(UREL_FI_NOTE_RX);
	if (!ep->note_buf)
		return -ENOMEM;
	return urel_fi_note_post(ep);
}

/* After urel_msg_close(), which freed the receive. */
void urel_fi_note_close(struct urel_fi_ep *ep)
{
	ep->note_rx = NULL;
	free(ep->note_buf);
	ep->note_buf = NULL;
}

int urel_fi_note_send(struct urel_fi_ep *ep, struct urel_fi_rma *op)
{
	unsigned char *p = (unsigned char *)op->store;
	int ret;

	memset(p, 0, ep->note_len);
	urel_fi_put64(p, op->nriov);
	for (size_t i = 0; i < op->nriov; i++) {
		urel_fi_put64(p + 8 + 24 * i, op->riov[i].key);
		urel_fi_put64(p + 16 + 24 * i, op->riov[i].addr);
		urel_fi_put64(p + 24 + 24 * i, op->riov[i].len);
	}
	ret = urel_msg_isend_data(ep->m, op->peer, p, ep->note_len, UREL_FI_NOTE_BITS, op->data, 0,
				  &op->note);
	return ret == -ENOBUFS ? -EAGAIN : ret;
}

/* A peer's notice: report it if its ranges are ones the module would have written. */
static void urel_fi_note_take(struct urel_fi_ep *ep, const struct urel_msg_status *st)
{
	const unsigned char *p = ep->note_buf;
	struct urel_fi_cqe c = {
		.e = { .flags = FI_REMOTE_CQ_DATA | FI_RMA | FI_REMOTE_WRITE, .data = st->data },
		.src = st->peer < ep->naddr_of ? ep->addr_of[st->peer] : FI_ADDR_NOTAVAIL,
	};
	uint64_t n;

	if (st->error && st->error != -EMSGSIZE) {
		UREL_FI_INFO(FI_LOG_EP_DATA, "notice receive: %s\n", urel_strerror(st->error));
		return;
	}
	n = st->received >= 8 ? urel_fi_get64(p) : ~0ULL;
	if (n > UREL_FI_IOV_LIMIT || st->received < 8 + 24 * n) {
		UREL_FI_WARN(FI_LOG_EP_DATA, "malformed notice from peer %u dropped\n", st->peer);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = urel_fi_get64(p + 8 + 24 * i);
		uint64_t off = urel_fi_get64(p + 16 + 24 * i);
		uint64_t len = urel_fi_get64(p + 24 + 24 * i);

		if (len && !urel_fi_mr_writable(ep, key, off, len)) {
			UREL_FI_INFO(FI_LOG_EP_DATA,
				     "notice of a refused write (key %#llx, %llu bytes at %llu)\n",
				     (unsigned long long)key, (unsigned long long)len,
				     (unsigned long long)off);
			return;
		}
		c.e.len += len;
	}
	if (ep->rx_cq)
		urel_fi_cq_push(ep->rx_cq, &c);
}

/* Take the notices that arrived (ep->lock held, after the library progressed). */
void urel_fi_note_progress(struct urel_fi_ep *ep)
{
	if (!ep->note_buf)
		return;
	for (int i = 0; i < UREL_FI_NOTE_BATCH; i++) {
		struct urel_msg_status st = { 0 };
		int ret;

		if (!ep->note_rx && urel_fi_note_post(ep)) {
			ep->note_rx = NULL;
			return; /* out of memory: again on the next call */
		}
		ret = urel_msg_test_noprogress(ep->note_rx, &st);
		if (ret <= 0) {
			if (ret < 0)
				UREL_FI_WARN(FI_LOG_EP_DATA, "notice: %s\n", urel_strerror(ret));
			return;
		}
		ep->note_rx = NULL;
		urel_fi_note_take(ep, &st);
		/* A failed peer fails receives posted now: post again on the next call. */
		if (st.error && st.error != -EMSGSIZE)
			return;
	}
}
