// SPDX-License-Identifier: MIT
/*
 * libusnicrel: two-sided sends on either channel.
 */
#include <errno.h>

#include "internal.h"

UREL_API int urel_ep_send(struct urel_ep *ep, urel_peer_t peer, unsigned int chan, const void *buf,
			  size_t len, uint64_t imm, void *context, unsigned int flags)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.peer = peer,
		.imm = imm,
	};

	if (!ep || chan >= USNIC_REL_NR_CHANS || (!buf && len) || flags & ~UREL_POST_MORE)
		return -EINVAL;
	if (len > ep->info.max_msg[chan])
		return -EMSGSIZE;
	if (!urel_av_has(ep, peer))
		return -ENXIO;
	sqe.len = (uint32_t)len;
	/* A zero-length send still carries its immediate data. */
	return urel_sq_post(ep, chan, &sqe, buf ? buf : "", context, NULL, flags);
}
