// SPDX-License-Identifier: MIT
/*
 * libusnicrel: endpoints. Creating one asks the module for a bound UDP
 * socket and its rings, maps every region and hands all receive buffers to
 * the kernel; destroying one unmaps and releases everything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "internal.h"

static void urel_ring_init(struct urel_ring *r, void *mem, const struct usnic_rel_region *reg,
			   bool user_produces)
{
	r->mem = mem;
	r->head = (uint32_t *)((char *)mem + USNIC_REL_RING_HEAD_OFF);
	r->tail = (uint32_t *)((char *)mem + USNIC_REL_RING_TAIL_OFF);
	r->flags = &((struct usnic_rel_ring_hdr *)mem)->flags;
	r->desc = (char *)mem + USNIC_REL_RING_DESC_OFF;
	r->entries = reg->entries;
	r->mask = reg->entries - 1;
	r->size = reg->size;
	r->idx = user_produces ? urel_load_acquire(r->tail) : urel_load_acquire(r->head);
}

static int urel_ep_map(struct urel_ep *ep)
{
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		const struct usnic_rel_region *reg = &ep->info.region[i];
		void *p = mmap(NULL, reg->size, PROT_READ | PROT_WRITE, MAP_SHARED, ep->dev->fd,
			       (off_t)reg->offset);

		if (p == MAP_FAILED)
			return -errno;
		ep->region[i] = p;
		/*
		 * A forked child writing these rings would corrupt the parent's
		 * endpoint. Best effort: kernels without madvise (tinyconfig) work.
		 */
		if (madvise(p, reg->size, MADV_DONTFORK) && errno != ENOSYS)
			return -errno;
	}
	urel_ring_init(&ep->sq[USNIC_REL_CHAN_CMD], ep->region[USNIC_REL_REGION_SQ_CMD],
		       &ep->info.region[USNIC_REL_REGION_SQ_CMD], true);
	urel_ring_init(&ep->sq[USNIC_REL_CHAN_DATA], ep->region[USNIC_REL_REGION_SQ_DATA],
		       &ep->info.region[USNIC_REL_REGION_SQ_DATA], true);
	urel_ring_init(&ep->cq, ep->region[USNIC_REL_REGION_CQ],
		       &ep->info.region[USNIC_REL_REGION_CQ], false);
	urel_ring_init(&ep->rx_free, ep->region[USNIC_REL_REGION_RX_FREE],
		       &ep->info.region[USNIC_REL_REGION_RX_FREE], true);
	return 0;
}

static void urel_ep_unmap(struct urel_ep *ep)
{
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		if (ep->region[i])
			munmap(ep->region[i], ep->info.region[i].size);
		ep->region[i] = NULL;
	}
}

static void urel_ep_free(struct urel_ep *ep)
{
	urel_ep_unmap(ep);
	urel_staging_fini(&ep->staging);
	urel_ops_fini(ep);
	urel_av_free(ep);
	free(ep->rx_user);
	pthread_mutex_destroy(&ep->tx_lock);
	pthread_mutex_destroy(&ep->cq_lock);
	urel_progress_fini(ep);
	pthread_mutex_destroy(&ep->rx_lock);
	pthread_mutex_destroy(&ep->av_lock);
	free(ep);
}

static int urel_ep_kernel_destroy(struct urel_ep *ep)
{
	struct usnic_rel_destroy_ep arg = {
		.size = sizeof(arg),
		.ep_id = ep->info.ep_id,
	};

	return ioctl(ep->dev->fd, USNIC_REL_IOC_DESTROY_EP, &arg) < 0 ? -errno : 0;
}

/* The rings as the module sized them must be usable as the library assumes. */
static int urel_ep_check_layout(const struct usnic_rel_create_ep *info)
{
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		uint32_t n = info->region[i].entries;

		if (i == USNIC_REL_REGION_STAGING || i == USNIC_REL_REGION_RX_BUFS)
			continue;
		if (!n || n & (n - 1))
			return -EPROTO;
	}
	if (info->region[USNIC_REL_REGION_RX_FREE].entries < info->rx_bufs ||
	    info->region[USNIC_REL_REGION_RX_BUFS].entries != info->rx_bufs || !info->rx_bufs)
		return -EPROTO;
	return 0;
}

UREL_API int urel_ep_create_flags(struct urel_device *dev, const struct sockaddr *addr,
				  socklen_t addrlen, const struct urel_ep_attr *attr,
				  unsigned int flags, struct urel_ep **epp)
{
	struct urel_ep *ep;
	int ret;

	if (!epp)
		return -EINVAL;
	*epp = NULL;
	if (!dev || flags & ~UREL_EP_SERIAL)
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->dev = dev;
	ep->serial = flags & UREL_EP_SERIAL;
	pthread_mutex_init(&ep->tx_lock, NULL);
	pthread_mutex_init(&ep->cq_lock, NULL);
	urel_progress_init(ep);
	pthread_mutex_init(&ep->rx_lock, NULL);
	pthread_mutex_init(&ep->av_lock, NULL);
	ep->info.size = sizeof(ep->info);
	ret = urel_addr_from_sockaddr(&ep->info.addr, addr, addrlen);
	if (ret)
		goto err_free;
	if (attr) {
		ep->info.sq_entries = attr->sq_entries;
		ep->info.cq_entries = attr->cq_entries;
		ep->info.rx_bufs = attr->rx_bufs;
		ep->info.staging_size = attr->staging_size;
		ep->info.rx_buf_size = attr->rx_buf_size;
	}
	if (ioctl(dev->fd, USNIC_REL_IOC_CREATE_EP, &ep->info) < 0) {
		ret = -errno;
		goto err_free;
	}
	ret = urel_ep_check_layout(&ep->info);
	if (ret)
		goto err_destroy;
	urel_addr_to_sockaddr(&ep->addr, &ep->info.addr);
	ret = urel_ep_map(ep);
	if (ret)
		goto err_destroy;
	ret = urel_staging_init(&ep->staging, ep->info.staging_size);
	if (ret)
		goto err_destroy;
	/* Every operation that can be outstanding has a slot: the rings bound them. */
	ret = urel_ops_init(ep, ep->info.cq_entries + USNIC_REL_NR_CHANS * ep->info.sq_entries);
	if (ret)
		goto err_destroy;
	ep->rx_user = calloc(ep->info.rx_bufs, 1);
	if (!ep->rx_user) {
		ret = -ENOMEM;
		goto err_destroy;
	}
	ret = urel_rx_post_all(ep);
	if (ret)
		goto err_destroy;
	urel_device_add_ep(dev, ep);
	*epp = ep;
	return 0;

err_destroy:
	urel_ep_kernel_destroy(ep);
err_free:
	urel_ep_free(ep);
	return ret;
}

UREL_API int urel_ep_create(struct urel_device *dev, const struct sockaddr *addr, socklen_t addrlen,
			    const struct urel_ep_attr *attr, struct urel_ep **epp)
{
	return urel_ep_create_flags(dev, addr, addrlen, attr, 0, epp);
}

int urel_ep_teardown(struct urel_ep *ep)
{
	int ret = urel_ep_kernel_destroy(ep);

	urel_ep_free(ep);
	return ret;
}

UREL_API int urel_ep_destroy(struct urel_ep *ep)
{
	if (!ep)
		return -EINVAL;
	urel_device_remove_ep(ep->dev, ep);
	return urel_ep_teardown(ep);
}

UREL_API int urel_ep_query(const struct urel_ep *ep, struct urel_ep_info *info)
{
	if (!ep || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->addr = ep->addr;
	info->incarnation = ep->info.incarnation;
	for (int i = 0; i < UREL_NR_CHANS; i++) {
		info->mtu[i] = ep->info.mtu[i];
		info->max_msg[i] = ep->info.max_msg[i];
	}
	info->inline_max = USNIC_REL_SQE_INLINE_MAX;
	info->sq_entries = ep->info.sq_entries;
	info->cq_entries = ep->info.cq_entries;
	info->rx_bufs = ep->info.rx_bufs;
	info->rx_buf_size = ep->info.rx_buf_size;
	info->staging_size = ep->info.staging_size;
	info->debug_id = ep->info.debug_id;
	return 0;
}
