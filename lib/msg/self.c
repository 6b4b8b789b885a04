// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: sends a context makes to itself (MPI's
 * sends to one's own rank). They never touch the wire: a posted receive
 * takes the bytes straight from the sender's buffer; otherwise the message
 * waits as unexpected, copied like an eager one when it is a small
 * standard send (which then completes), else still in the sender's buffer
 * (the send completes when a receive or matched probe takes it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/* Under m->lock; @r is the send's request. */
int urel_msg_self_send(struct urel_msg *m, struct urel_msg_req *r, const void *buf, size_t len,
		       uint64_t tag, bool sync)
{
	struct urel_msg_handle u = {
		.m = m,
		.peer = UREL_MSG_SELF,
		.op = UREL_MSG_OP_SELF,
		.len = len,
		.self = r,
		.imm = r->st.data,
	};
	struct urel_match_entry *e;
	struct urel_msg_handle *q;

	u.e.bits = tag;
	r->buf = (void *)buf;
	e = urel_match_incoming(&m->match, UREL_MSG_SELF, tag);
	if (e) {
		urel_msg_posted_gone(m, e->src);
		urel_msg_deliver(m, (struct urel_msg_req *)e, &u, NULL);
		return 0;
	}
	q = malloc(sizeof(*q));
	if (!q)
		return -ENOMEM;
	*q = u;
	if (!sync && len <= m->attr.eager_max) {
		/* Buffered as an eager message would be: the send is done. */
		q->op = UREL_MSG_OP_EAGER;
		q->self = NULL;
		q->data = NULL;
		if (len) {
			q->data = malloc(len);
			if (!q->data) {
				free(q);
				return -ENOMEM;
			}
			memcpy(q->data, buf, len);
			m->unexp_bytes += len;
			if (m->unexp_bytes > m->unexp_peak)
				m->unexp_peak = m->unexp_bytes;
		}
		urel_msg_complete(r);
	}
	urel_msg_unexpected(m, q);
	return 0;
}

/*
 * A matched probe took our own message @u: the match happened, so its send
 * completes, and the bytes move into the handle first (the sender may reuse
 * its buffer at once). Without memory for them the send completes later,
 * when the handle is received. Under m->lock.
 */
void urel_msg_self_claim(struct urel_msg *m, struct urel_msg_handle *u)
{
	unsigned char *copy = NULL;

	if (u->op != UREL_MSG_OP_SELF)
		return;
	if (u->len) {
		copy = malloc(u->len);
		if (!copy)
			return;
		memcpy(copy, u->self->buf, u->len);
		m->unexp_bytes += u->len;
		if (m->unexp_bytes > m->unexp_peak)
			m->unexp_peak = m->unexp_bytes;
	}
	urel_msg_complete(u->self);
	u->self = NULL;
	u->op = UREL_MSG_OP_EAGER;
	u->data = copy;
}
