// SPDX-License-Identifier: MIT
/*
 * libusnicrel: two-sided sends on either channel, from one buffer or
 * gathered from several (a protocol header and the user's data, say,
 * without an extra copy).
 */
#include <errno.h>

#include "internal.h"

/* Gather lists longer than this are a caller bug, not a message. */
#define UREL_SENDV_MAX_IOV 64

UREL_API int urel_ep_sendv(struct urel_ep *ep, urel_peer_t peer, unsigned int chan,
			   const struct iovec *iov, unsigned int iovcnt, uint64_t imm,
			   void *context, unsigned int flags)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.peer = peer,
		.imm = imm,
	};
	struct urel_payload pl = { .iov = iov, .iovcnt = iovcnt };
	size_t len = 0;

	if (!ep || chan >= USNIC_REL_NR_CHANS || (!iov && iovcnt) || iovcnt > UREL_SENDV_MAX_IOV ||
	    flags & ~UREL_POST_MORE)
		return -EINVAL;
	for (unsigned int i = 0; i < iovcnt; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return -EINVAL;
		if (iov[i].iov_len > ep->info.max_msg[chan] - len)
			return -EMSGSIZE;
		len += iov[i].iov_len;
	}
	if (!urel_av_has(ep, peer))
		return -ENXIO;
	sqe.len = (uint32_t)len;
	return urel_sq_post(ep, chan, &sqe, &pl, context, NULL, flags);
}

UREL_API int urel_ep_send(struct urel_ep *ep, urel_peer_t peer, unsigned int chan, const void *buf,
			  size_t len, uint64_t imm, void *context, unsigned int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	if (!buf && len)
		return -EINVAL;
	if (ep && chan < USNIC_REL_NR_CHANS && len > ep->info.max_msg[chan])
		return -EMSGSIZE;
	return urel_ep_sendv(ep, peer, chan, &iov, 1, imm, context, flags);
}
