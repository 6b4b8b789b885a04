// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the address vector of an endpoint. Userspace names a peer by a
 * small handle; the receive path finds the peer by source address under RCU.
 * The peer's incarnation is learned from its packets, not from userspace.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "usnic_rel.h"

/* Handles start at 1 so that a zeroed SQE never names a peer. */
#define USNIC_REL_MAX_PEERS	65535

/*
 * Peers come from a cache of their own (/sys/kernel/slab/usnic_rel_peer):
 * an MPI job puts every rank in the address vector, and kmalloc would round
 * each up to a power of two (a 1 KiB or 2 KiB object for a structure of
 * 800 B to 1.2 KiB).
 */
static struct kmem_cache *usnic_rel_peer_cache;

int usnic_rel_peer_cache_init(void)
{
	usnic_rel_peer_cache = KMEM_CACHE(usnic_rel_peer, SLAB_ACCOUNT);
	return usnic_rel_peer_cache ? 0 : -ENOMEM;
}

/*
 * After every endpoint, so every peer, is gone, and the work that frees
 * removed peers has run (usnic_rel_exit() drains usnic_rel_wq).
 */
void usnic_rel_peer_cache_exit(void)
{
	kmem_cache_destroy(usnic_rel_peer_cache);
}

static void usnic_rel_peer_free(struct usnic_rel_peer *peer)
{
	kmem_cache_free(usnic_rel_peer_cache, peer);
}

/* What hangs off a peer (windows, cached route), then the peer. */
static void usnic_rel_peer_release(struct usnic_rel_peer *peer)
{
	usnic_rel_conn_free(peer);
	usnic_rel_route_close(&peer->route);
	usnic_rel_peer_free(peer);
}

static u32 usnic_rel_peer_hash_v4(__be32 addr, __be16 port)
{
	return jhash_2words((__force u32)addr, (__force u32)port, 0);
}

static u32 usnic_rel_peer_hash_v6(const struct in6_addr *addr, __be16 port)
{
	return jhash2((__force const u32 *)addr->s6_addr32, 4, (__force u32)port);
}

struct usnic_rel_peer *usnic_rel_peer_lookup_v4(struct usnic_rel_ep *ep,
						__be32 addr, __be16 port)
{
	struct usnic_rel_peer *peer;

	hash_for_each_possible_rcu(ep->peer_hash, peer, node,
				   usnic_rel_peer_hash_v4(addr, port)) {
		if (peer->addr.v4.sin_addr.s_addr == addr &&
		    peer->addr.v4.sin_port == port)
			return peer;
	}
	return NULL;
}

struct usnic_rel_peer *usnic_rel_peer_lookup_v6(struct usnic_rel_ep *ep,
						const struct in6_addr *addr,
						__be16 port)
{
	struct usnic_rel_peer *peer;

	hash_for_each_possible_rcu(ep->peer_hash, peer, node,
				   usnic_rel_peer_hash_v6(addr, port)) {
		if (ipv6_addr_equal(&peer->addr.v6.sin6_addr, addr) &&
		    peer->addr.v6.sin6_port == port)
			return peer;
	}
	return NULL;
}

/* Caller holds ctx->lock, which serialises every AV change. */
int usnic_rel_av_insert(struct usnic_rel_ep *ep, struct usnic_rel_av_insert *arg)
{
	const struct usnic_rel_addr *a = &arg->addr;
	struct usnic_rel_peer *peer, *dup;
	u32 hash, handle;
	int ret;

	if (a->family != ep->family || a->reserved || !a->port)
		return -EINVAL;
	peer = kmem_cache_zalloc(usnic_rel_peer_cache, GFP_KERNEL_ACCOUNT);
	if (!peer)
		return -ENOMEM;
	peer->ep = ep;
	usnic_rel_route_init(&peer->route);
	ret = usnic_rel_conn_init(peer);
	if (ret) {
		usnic_rel_peer_free(peer);
		return ret;
	}
	if (a->family == AF_INET) {
		peer->addr.v4.sin_family = AF_INET;
		peer->addr.v4.sin_port = htons(a->port);
		memcpy(&peer->addr.v4.sin_addr, a->addr, 4);
		if (memchr_inv(a->addr + 4, 0, sizeof(a->addr) - 4) ||
		    ipv4_is_multicast(peer->addr.v4.sin_addr.s_addr) ||
		    ipv4_is_lbcast(peer->addr.v4.sin_addr.s_addr) ||
		    ipv4_is_zeronet(peer->addr.v4.sin_addr.s_addr)) {
			ret = -EINVAL;
			goto err_free;
		}
		hash = usnic_rel_peer_hash_v4(peer->addr.v4.sin_addr.s_addr,
					      peer->addr.v4.sin_port);
		rcu_read_lock();
		dup = usnic_rel_peer_lookup_v4(ep, peer->addr.v4.sin_addr.s_addr,
					       peer->addr.v4.sin_port);
		rcu_read_unlock();
	} else {
		peer->addr.v6.sin6_family = AF_INET6;
		peer->addr.v6.sin6_port = htons(a->port);
		memcpy(&peer->addr.v6.sin6_addr, a->addr, 16);
		/* An IPv6-only socket cannot reach v4-mapped addresses. */
		if (ipv6_addr_any(&peer->addr.v6.sin6_addr) ||
		    ipv6_addr_is_multicast(&peer->addr.v6.sin6_addr) ||
		    ipv6_addr_v4mapped(&peer->addr.v6.sin6_addr)) {
			ret = -EINVAL;
			goto err_free;
		}
		hash = usnic_rel_peer_hash_v6(&peer->addr.v6.sin6_addr,
					      peer->addr.v6.sin6_port);
		rcu_read_lock();
		dup = usnic_rel_peer_lookup_v6(ep, &peer->addr.v6.sin6_addr,
					       peer->addr.v6.sin6_port);
		rcu_read_unlock();
	}
	/* Only compared: AV changes are serialised by ctx->lock. */
	if (dup) {
		ret = -EEXIST;
		goto err_free;
	}
	ret = xa_alloc(&ep->peers, &handle, peer,
		       XA_LIMIT(1, USNIC_REL_MAX_PEERS), GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_free;
	peer->handle = handle;
	hash_add_rcu(ep->peer_hash, &peer->node, hash);
	arg->peer = handle;
	return 0;

err_free:
	usnic_rel_peer_release(peer);
	return ret;
}

/*
 * After a grace period: no receiver is left that found the peer by address,
 * nor a reader of debugfs. Process context, for what the windows free.
 */
static void usnic_rel_peer_free_work(struct work_struct *work)
{
	struct usnic_rel_peer *peer = container_of(to_rcu_work(work),
						   struct usnic_rel_peer,
						   free_work);
	struct usnic_rel_ep *ep = peer->ep;

	usnic_rel_peer_release(peer);
	usnic_rel_ep_put(ep);
}

/*
 * Stop a peer that is no longer reachable through the AV. With @live, the
 * endpoint still runs: wait for senders (tx_lock) to let go and complete
 * what was outstanding to the peer with -ECANCELED; receivers still under
 * RCU take conn->lock, see REMOVED and leave, so the peer is freed after a
 * grace period without waiting for one here, under ctx->lock. The endpoint
 * stays until then: its reference is the last to go.
 */
static void usnic_rel_peer_destroy(struct usnic_rel_ep *ep,
				   struct usnic_rel_peer *peer, bool live)
{
	usnic_rel_conn_shutdown(peer);
	if (!live) {
		usnic_rel_peer_release(peer);
		return;
	}
	/*
	 * Its route now, not after the grace period: by then the endpoint's
	 * socket, and with it the namespace the routes belong to, may be gone.
	 * Under tx_lock, which senders hold, and the route's lock, which an
	 * answer sent from the receive softirq takes: none caches one again.
	 */
	mutex_lock(&ep->tx_lock);
	usnic_rel_route_close(&peer->route);
	mutex_unlock(&ep->tx_lock);
	spin_lock_bh(&peer->conn.lock);
	usnic_rel_conn_fail_all(ep, peer, -ECANCELED);
	usnic_rel_send_parked_cancel(ep, peer, -ECANCELED);
	spin_unlock_bh(&peer->conn.lock);
	kref_get(&ep->ref);
	INIT_RCU_WORK(&peer->free_work, usnic_rel_peer_free_work);
	queue_rcu_work(usnic_rel_wq, &peer->free_work);
}

/* Caller holds ctx->lock; senders and receivers may still see @peer under RCU. */
int usnic_rel_av_remove(struct usnic_rel_ep *ep, u32 handle)
{
	struct usnic_rel_peer *peer;

	peer = xa_erase(&ep->peers, handle);
	if (!peer)
		return -EINVAL;
	hash_del_rcu(&peer->node);
	usnic_rel_peer_destroy(ep, peer, true);
	return 0;
}

/* Endpoint teardown: no sender and no receiver is left. */
void usnic_rel_av_destroy(struct usnic_rel_ep *ep)
{
	struct usnic_rel_peer *peer;
	unsigned long handle;

	xa_for_each(&ep->peers, handle, peer) {
		xa_erase(&ep->peers, handle);
		hash_del_rcu(&peer->node);
		usnic_rel_peer_destroy(ep, peer, false);
	}
	xa_destroy(&ep->peers);
}
