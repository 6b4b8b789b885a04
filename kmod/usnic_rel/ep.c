// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: endpoints. An endpoint is a UDP tunnel socket plus the rings
 * and buffers it shares with userspace; it belongs to one open file.
 */
#include <linux/idr.h>
#include <linux/sizes.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/sched/signal.h>

#include "usnic_rel.h"
#include "wire.h"

#define USNIC_REL_MAX_EPS		1024
#define USNIC_REL_SQ_DEFAULT		256
#define USNIC_REL_SQ_MAX		4096
#define USNIC_REL_CQ_DEFAULT		1024
#define USNIC_REL_CQ_MAX		16384
#define USNIC_REL_RX_BUFS_DEFAULT	256
#define USNIC_REL_RX_BUFS_MAX		4096
#define USNIC_REL_STAGING_DEFAULT	SZ_1M
#define USNIC_REL_STAGING_MAX		SZ_64M
/* Jumbo frames at most: larger lo MTUs would only inflate buffers. */
#define USNIC_REL_DEV_MTU_MAX		9000
/* Largest two-sided message: larger transfers go by RDMA GET (rendezvous). */
#define USNIC_REL_RX_BUF_SIZE		SZ_64K
static_assert(USNIC_REL_RX_BUF_SIZE <= USNIC_REL_RX_BUF_MAX);
static_assert(USNIC_REL_RX_BUF_MAX <= USNIC_REL_WIRE_MAX_MSG);

/* mmap offsets: page offset = ep_id << 3 | region. */
#define USNIC_REL_MMAP_REGION_BITS	3
static_assert(BIT(USNIC_REL_MMAP_REGION_BITS) >= USNIC_REL_NR_REGIONS);

static_assert(sizeof(struct usnic_rel_sqe) == 128);
static_assert(sizeof(struct usnic_rel_cqe) == 48);
static_assert(sizeof(struct usnic_rel_ring_hdr) == USNIC_REL_RING_DESC_OFF);
static_assert(offsetof(struct usnic_rel_ring_hdr, tail) == USNIC_REL_RING_TAIL_OFF);

static DEFINE_IDA(usnic_rel_debug_ida);

static void usnic_rel_ep_release(struct kref *ref)
{
	struct usnic_rel_ep *ep = container_of(ref, struct usnic_rel_ep, ref);
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		usnic_rel_ring_free(&ep->sq[i]);
	usnic_rel_ring_free(&ep->cq);
	usnic_rel_ring_free(&ep->rx_free);
	/* Every held skb was freed with the peers, and gave its charge back. */
	WARN_ON_ONCE(atomic_long_read(&ep->rx_held_bytes));
	WARN_ON_ONCE(atomic_long_read(&ep->win_bytes));
	/* Every packet copy went with its window or its batch. */
	WARN_ON_ONCE(atomic_long_read(&ep->tx_bufs));
	vfree(ep->rx_bufs);
	vfree(ep->staging);
	usnic_rel_pack_free(ep);
	/* Nothing counts any more: the socket and the peers are gone. */
	free_percpu(ep->counters);
	mutex_destroy(&ep->tx_lock);
	ida_free(&usnic_rel_debug_ida, ep->debug_id);
	usnic_rel_user_put_ep(ep->owner);
	/* Lookups in ctx->eps may still hold the pointer under RCU. */
	kfree_rcu(ep, rcu);
}

void usnic_rel_ep_put(struct usnic_rel_ep *ep)
{
	kref_put(&ep->ref, usnic_rel_ep_release);
}

struct usnic_rel_ep *usnic_rel_ep_get(struct usnic_rel_ctx *ctx, u32 ep_id)
{
	struct usnic_rel_ep *ep;

	rcu_read_lock();
	ep = xa_load(&ctx->eps, ep_id);
	if (ep && !kref_get_unless_zero(&ep->ref))
		ep = NULL;
	rcu_read_unlock();
	return ep;
}

/* Round a requested size up to a power of two; 0 picks @def. */
static int usnic_rel_ring_size(u32 *val, u32 def, u32 max)
{
	if (!*val)
		*val = def;
	if (*val > max)
		return -EINVAL;
	*val = roundup_pow_of_two(*val);
	return 0;
}

static int usnic_rel_ep_check_addr(const struct usnic_rel_addr *a)
{
	if (a->reserved)
		return -EINVAL;
	if (a->family == AF_INET)
		return memchr_inv(a->addr + 4, 0, sizeof(a->addr) - 4) ? -EINVAL : 0;
	if (a->family == AF_INET6)
		return 0;
	return -EINVAL;
}

static void usnic_rel_ep_set_mtu(struct usnic_rel_ep *ep,
				 const struct usnic_rel_addr *addr)
{
	u32 overhead = sizeof(struct udphdr) + sizeof(struct usnic_rel_hdr) +
		       sizeof(struct usnic_rel_data_hdr);
	u32 mtu = usnic_rel_socket_dev_mtu(ep->net, addr);

	overhead += ep->family == AF_INET ? sizeof(struct iphdr) :
					    sizeof(struct ipv6hdr);
	/* IPv6 guarantees 1280; below the command MTU the device is useless. */
	mtu = clamp(mtu, 1280U, USNIC_REL_DEV_MTU_MAX) - overhead;
	ep->mtu[USNIC_REL_CHAN_DATA] = mtu;
	ep->mtu[USNIC_REL_CHAN_CMD] = min(usnic_rel_cmd_mtu, mtu);
	/*
	 * Messages up to a buffer are cut into packets and reassembled; what
	 * we send is bounded by the peer's buffers (its HELLO), not ours.
	 */
	ep->max_msg[USNIC_REL_CHAN_DATA] = USNIC_REL_RX_BUF_SIZE;
	ep->max_msg[USNIC_REL_CHAN_CMD] = USNIC_REL_RX_BUF_SIZE;
}

static int usnic_rel_ep_alloc_rings(struct usnic_rel_ep *ep,
				    const struct usnic_rel_create_ep *arg)
{
	int i, ret;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		ret = usnic_rel_ring_alloc(&ep->sq[i], arg->sq_entries,
					   sizeof(struct usnic_rel_sqe));
		if (ret)
			return ret;
	}
	ret = usnic_rel_ring_alloc(&ep->cq, arg->cq_entries,
				   sizeof(struct usnic_rel_cqe));
	if (ret)
		return ret;
	ret = usnic_rel_ring_alloc(&ep->rx_free, arg->rx_bufs, sizeof(u32));
	if (ret)
		return ret;
	ep->rx_buf_count = arg->rx_bufs;
	ep->rx_bufs_size = PAGE_ALIGN(arg->rx_bufs * ep->rx_buf_size);
	ep->rx_bufs = usnic_rel_vmalloc_user(ep->rx_bufs_size);
	if (!ep->rx_bufs)
		return -ENOMEM;
	ep->staging_size = PAGE_ALIGN(arg->staging_size);
	ep->staging = usnic_rel_vmalloc_user(ep->staging_size);
	if (!ep->staging)
		return -ENOMEM;
	return 0;
}

static void usnic_rel_region_info(struct usnic_rel_ep *ep, unsigned int region,
				  void **mem, u32 *size, u32 *entries)
{
	struct usnic_rel_ring *ring = NULL;

	switch (region) {
	case USNIC_REL_REGION_SQ_CMD:
		ring = &ep->sq[USNIC_REL_CHAN_CMD];
		break;
	case USNIC_REL_REGION_SQ_DATA:
		ring = &ep->sq[USNIC_REL_CHAN_DATA];
		break;
	case USNIC_REL_REGION_CQ:
		ring = &ep->cq;
		break;
	case USNIC_REL_REGION_RX_FREE:
		ring = &ep->rx_free;
		break;
	case USNIC_REL_REGION_RX_BUFS:
		*mem = ep->rx_bufs;
		*size = ep->rx_bufs_size;
		*entries = ep->rx_buf_count;
		return;
	default:
		*mem = ep->staging;
		*size = ep->staging_size;
		*entries = 0;
		return;
	}
	*mem = ring->mem;
	*size = ring->size;
	*entries = ring->entries;
}

/* Caller holds ctx->lock. */
int usnic_rel_ep_create(struct usnic_rel_ctx *ctx, struct usnic_rel_create_ep *arg)
{
	struct usnic_rel_user *user;
	struct usnic_rel_ep *ep;
	unsigned int i;
	void *mem;
	int ret;

	if (arg->flags || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)) ||
	    usnic_rel_ep_check_addr(&arg->addr))
		return -EINVAL;
	if (usnic_rel_ring_size(&arg->sq_entries, USNIC_REL_SQ_DEFAULT,
				USNIC_REL_SQ_MAX) ||
	    usnic_rel_ring_size(&arg->cq_entries, USNIC_REL_CQ_DEFAULT,
				USNIC_REL_CQ_MAX) ||
	    usnic_rel_ring_size(&arg->rx_bufs, USNIC_REL_RX_BUFS_DEFAULT,
				USNIC_REL_RX_BUFS_MAX))
		return -EINVAL;
	if (!arg->staging_size)
		arg->staging_size = USNIC_REL_STAGING_DEFAULT;
	if (arg->staging_size > USNIC_REL_STAGING_MAX)
		return -EINVAL;
	if (!arg->rx_buf_size)
		arg->rx_buf_size = USNIC_REL_RX_BUF_SIZE;
	if (arg->rx_buf_size < USNIC_REL_RX_BUF_MIN ||
	    arg->rx_buf_size > USNIC_REL_RX_BUF_MAX || arg->rx_buf_size % 64)
		return -EINVAL;
	/* Each endpoint is a socket: as many as the caller may open files. */
	if (ctx->nr_eps >= rlimit(RLIMIT_NOFILE))
		return -EMFILE;
	/* What xa_alloc() would refuse, refused before there is a socket. */
	if (ctx->nr_eps >= USNIC_REL_MAX_EPS)
		return -EBUSY;

	/* Limits first: past them nothing is allocated. */
	ret = usnic_rel_user_get_ep(current_uid(), &user);
	if (ret)
		return ret;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep) {
		usnic_rel_user_put_ep(current_uid());
		return -ENOMEM;
	}
	ep->owner = current_uid();
	ep->user = user;
	kref_init(&ep->ref);
	mutex_init(&ep->tx_lock);
	ep->tx_cpu = -1;
	usnic_rel_send_init(ep);
	spin_lock_init(&ep->rx_lock);
	xa_init_flags(&ep->peers, XA_FLAGS_ALLOC);
	hash_init(ep->peer_hash);
	spin_lock_init(&ep->win_lock);
	INIT_LIST_HEAD(&ep->win_conns);
	INIT_DELAYED_WORK(&ep->win_reap, usnic_rel_win_reap);
	ep->ctx = ctx;
	ep->serial = ++ctx->ep_serial;
	ep->net = ctx->net;
	ep->family = arg->addr.family;
	ep->rx_buf_size = arg->rx_buf_size;
	ep->incarnation = get_random_u32() ?: 1;
	ret = ida_alloc(&usnic_rel_debug_ida, GFP_KERNEL);
	if (ret < 0) {
		mutex_destroy(&ep->tx_lock);
		usnic_rel_user_put_ep(ep->owner);
		kfree(ep);
		return ret;
	}
	ep->debug_id = ret;
	usnic_rel_ep_set_mtu(ep, &arg->addr);

	ret = usnic_rel_counters_alloc(ep);
	if (ret)
		goto err_put;
	ret = usnic_rel_ep_alloc_rings(ep, arg);
	if (ret)
		goto err_put;
	/* Last: packets may arrive as soon as the socket exists. */
	ret = usnic_rel_socket_open(ep, &arg->addr);
	if (ret)
		goto err_put;
	ret = xa_alloc(&ctx->eps, &ep->id, ep, XA_LIMIT(1, USNIC_REL_MAX_EPS),
		       GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_close;
	ctx->nr_eps++;
	usnic_rel_debugfs_ep_add(ep);
	usnic_rel_sysfs_ep_add(ep, &arg->addr);

	arg->addr.port = ep->port;
	arg->ep_id = ep->id;
	arg->incarnation = ep->incarnation;
	arg->debug_id = ep->debug_id;
	arg->staging_size = ep->staging_size;
	arg->rx_buf_size = ep->rx_buf_size;
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		arg->mtu[i] = ep->mtu[i];
		/* Until segmentation lands a message is one packet. */
		arg->max_msg[i] = ep->max_msg[i];
	}
	for (i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		struct usnic_rel_region *r = &arg->region[i];

		usnic_rel_region_info(ep, i, &mem, &r->size, &r->entries);
		r->offset = (u64)(ep->id << USNIC_REL_MMAP_REGION_BITS | i)
			    << PAGE_SHIFT;
	}
	return 0;

err_close:
	/* Rare (no memory): the only grace period waited under ctx->lock. */
	usnic_rel_socket_close(ep);
	synchronize_rcu();
err_put:
	usnic_rel_ep_put(ep);
	return ret;
}

/*
 * Stop traffic and detach the socket. Once a grace period has passed, no
 * receiver runs for @ep any more (usnic_rel_socket_close()).
 */
static void usnic_rel_ep_stop(struct usnic_rel_ep *ep)
{
	mutex_lock(&ep->tx_lock);
	usnic_rel_send_final_acks(ep);
	ep->dead = true;
	usnic_rel_fault_flush(ep);
	mutex_unlock(&ep->tx_lock);
	usnic_rel_send_stop(ep);
	usnic_rel_socket_close(ep);
}

/* After that grace period: drop the context's reference; mappings keep the rings. */
static void usnic_rel_ep_finish(struct usnic_rel_ep *ep)
{
	int i;

	usnic_rel_debugfs_ep_remove(ep);
	usnic_rel_av_destroy(ep);
	/* Dead: it would not run again, but it may be waiting to. */
	cancel_delayed_work_sync(&ep->win_reap);
	usnic_rel_sysfs_ep_remove(ep);
	/* No sender is left: drop the one-sided ops parked sends held. */
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		usnic_rel_rdma_cur_drop(&ep->sq_cur[i]);
	usnic_rel_ep_put(ep);
}

/*
 * Caller holds ctx->lock: take @ep_id out of the context, so that no other
 * ioctl finds it, and return it for usnic_rel_ep_teardown(), which the
 * caller runs after dropping the lock (it waits for a grace period).
 */
struct usnic_rel_ep *usnic_rel_ep_unlist(struct usnic_rel_ctx *ctx, u32 ep_id)
{
	struct usnic_rel_ep *ep = xa_erase(&ctx->eps, ep_id);

	if (ep)
		ctx->nr_eps--;
	return ep;
}

void usnic_rel_ep_teardown(struct usnic_rel_ep *ep)
{
	usnic_rel_ep_stop(ep);
	synchronize_rcu();
	usnic_rel_ep_finish(ep);
}

/* The file is closed: one grace period for all its endpoints. */
void usnic_rel_ep_destroy_all(struct usnic_rel_ctx *ctx)
{
	struct usnic_rel_ep *ep;
	unsigned long id;

	if (xa_empty(&ctx->eps))
		return;
	xa_for_each(&ctx->eps, id, ep)
		usnic_rel_ep_stop(ep);
	synchronize_rcu();
	xa_for_each(&ctx->eps, id, ep) {
		xa_erase(&ctx->eps, id);
		ctx->nr_eps--;
		usnic_rel_ep_finish(ep);
	}
	xa_destroy(&ctx->eps);
}

/* True when the completion ring holds entries userspace has not consumed. */
bool usnic_rel_ep_readable(struct usnic_rel_ep *ep)
{
	return READ_ONCE(ep->cq.kidx) != READ_ONCE(ep->cq.hdr->head);
}

static void usnic_rel_vm_open(struct vm_area_struct *vma)
{
	struct usnic_rel_ep *ep = vma->vm_private_data;

	kref_get(&ep->ref);
}

static void usnic_rel_vm_close(struct vm_area_struct *vma)
{
	usnic_rel_ep_put(vma->vm_private_data);
}

/* Rings and buffers are data: mprotect() may not make them executable. */
static int usnic_rel_vm_mprotect(struct vm_area_struct *vma, unsigned long start,
				 unsigned long end, unsigned long newflags)
{
	return newflags & VM_EXEC ? -EACCES : 0;
}

static const struct vm_operations_struct usnic_rel_vm_ops = {
	.open = usnic_rel_vm_open,
	.close = usnic_rel_vm_close,
	.mprotect = usnic_rel_vm_mprotect,
};

int usnic_rel_ep_mmap(struct usnic_rel_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long pgoff = vma->vm_pgoff;
	unsigned int region = pgoff & (BIT(USNIC_REL_MMAP_REGION_BITS) - 1);
	unsigned long id = pgoff >> USNIC_REL_MMAP_REGION_BITS;
	struct usnic_rel_ep *ep;
	u32 size, entries;
	void *mem;
	int ret;

	/*
	 * Shared only (a private copy would never reach the kernel), never
	 * exec (nor later: usnic_rel_vm_mprotect()).
	 */
	if (region >= USNIC_REL_NR_REGIONS || id > USNIC_REL_MAX_EPS ||
	    !(vma->vm_flags & VM_SHARED) || vma->vm_flags & VM_EXEC)
		return -EINVAL;
	ep = usnic_rel_ep_get(ctx, id);
	if (!ep)
		return -EINVAL;
	usnic_rel_region_info(ep, region, &mem, &size, &entries);
	if (vma->vm_end - vma->vm_start > size)
		ret = -EINVAL;
	else
		ret = remap_vmalloc_range(vma, mem, 0);
	if (ret) {
		usnic_rel_ep_put(ep);
		return ret;
	}
	vma->vm_private_data = ep;
	vma->vm_ops = &usnic_rel_vm_ops;
	return 0;
}
