// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the address vector. The module owns the peer table; the
 * library mirrors which handles are live so that a send to an unknown peer
 * fails at once, with a lock-free check on the send path: chunks of flags
 * are allocated on demand and never move until the endpoint dies.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "internal.h"

static struct urel_av_chunk *urel_av_chunk(struct urel_ep *ep, urel_peer_t peer)
{
	if (peer >= UREL_AV_CHUNK * UREL_AV_CHUNKS)
		return NULL;
	return __atomic_load_n(&ep->av[peer / UREL_AV_CHUNK], __ATOMIC_ACQUIRE);
}

bool urel_av_has(struct urel_ep *ep, urel_peer_t peer)
{
	struct urel_av_chunk *c = urel_av_chunk(ep, peer);

	return c && __atomic_load_n(&c->live[peer % UREL_AV_CHUNK], __ATOMIC_RELAXED);
}

void urel_av_free(struct urel_ep *ep)
{
	for (unsigned int i = 0; i < UREL_AV_CHUNKS; i++)
		free(ep->av[i]);
}

static int urel_av_kernel_remove(struct urel_ep *ep, urel_peer_t peer)
{
	struct usnic_rel_av_remove arg = {
		.size = sizeof(arg),
		.ep_id = ep->info.ep_id,
		.peer = peer,
	};

	return ioctl(ep->dev->fd, USNIC_REL_IOC_AV_REMOVE, &arg) < 0 ? -errno : 0;
}

UREL_API int urel_av_insert(struct urel_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
			    urel_peer_t *peer)
{
	struct usnic_rel_av_insert arg = { .size = sizeof(arg) };
	struct urel_av_chunk *c;
	int ret;

	if (!ep || !peer)
		return -EINVAL;
	*peer = 0;
	ret = urel_addr_from_sockaddr(&arg.addr, addr, addrlen);
	if (ret)
		return ret;
	if (arg.addr.family != ep->info.addr.family)
		return -EAFNOSUPPORT;
	arg.ep_id = ep->info.ep_id;

	pthread_mutex_lock(&ep->av_lock);
	if (ioctl(ep->dev->fd, USNIC_REL_IOC_AV_INSERT, &arg) < 0) {
		ret = -errno;
		goto out;
	}
	if (!arg.peer || arg.peer >= UREL_AV_CHUNK * UREL_AV_CHUNKS) {
		/* More peers than the library can track: give the handle back. */
		urel_av_kernel_remove(ep, arg.peer);
		ret = -ENOSPC;
		goto out;
	}
	c = ep->av[arg.peer / UREL_AV_CHUNK];
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			urel_av_kernel_remove(ep, arg.peer);
			ret = -ENOMEM;
			goto out;
		}
		__atomic_store_n(&ep->av[arg.peer / UREL_AV_CHUNK], c, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&c->live[arg.peer % UREL_AV_CHUNK], 1, __ATOMIC_RELAXED);
	*peer = arg.peer;
out:
	pthread_mutex_unlock(&ep->av_lock);
	return ret;
}

UREL_API int urel_av_remove(struct urel_ep *ep, urel_peer_t peer)
{
	struct urel_av_chunk *c;
	int ret;

	if (!ep)
		return -EINVAL;
	pthread_mutex_lock(&ep->av_lock);
	c = urel_av_chunk(ep, peer);
	if (!c || !c->live[peer % UREL_AV_CHUNK]) {
		ret = -ENXIO;
		goto out;
	}
	ret = urel_av_kernel_remove(ep, peer);
	if (!ret)
		__atomic_store_n(&c->live[peer % UREL_AV_CHUNK], 0, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&ep->av_lock);
	return ret;
}
