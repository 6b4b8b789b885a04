// SPDX-License-Identifier: MIT
/*
 * libusnicrel: receive buffers. The kernel fills a buffer from the free ring
 * and names it in a completion; the user reads it in place and gives it
 * back. The library tracks who holds each buffer, so a buffer given back
 * twice (or never lent) is refused instead of corrupting the free ring,
 * which has exactly one slot per buffer.
 */
#include <errno.h>

#include "internal.h"

static void urel_rx_push(struct urel_ep *ep, uint32_t buf)
{
	struct urel_ring *r = &ep->rx_free;

	*(uint32_t *)urel_ring_slot(r, r->idx, sizeof(uint32_t)) = buf;
	urel_store_release(r->tail, ++r->idx);
}

int urel_rx_post_all(struct urel_ep *ep)
{
	urel_ep_lock(ep, &ep->rx_lock);
	for (uint32_t buf = 0; buf < ep->info.rx_bufs; buf++)
		urel_rx_push(ep, buf);
	urel_ep_unlock(ep, &ep->rx_lock);
	return 0;
}

/* A completion lent @buf to the user; false if the kernel named a buffer it did not hold. */
bool urel_rx_claim(struct urel_ep *ep, uint32_t buf)
{
	if (buf >= ep->info.rx_bufs)
		return false;
	return __atomic_exchange_n(&ep->rx_user[buf], 1, __ATOMIC_ACQ_REL) == 0;
}

UREL_API int urel_ep_release_recv(struct urel_ep *ep, uint32_t buf)
{
	uint8_t lent = 1;
	int ret;

	if (!ep || buf >= ep->info.rx_bufs)
		return -EINVAL;
	if (!__atomic_compare_exchange_n(&ep->rx_user[buf], &lent, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return -EINVAL;
	urel_ep_lock(ep, &ep->rx_lock);
	urel_rx_push(ep, buf);
	urel_ep_unlock(ep, &ep->rx_lock);
	ret = urel_rx_kick(ep);
	return ret < 0 ? ret : 0;
}
