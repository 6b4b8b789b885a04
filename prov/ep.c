// SPDX-License-Identifier: MIT
/*
 * urel provider: RDM endpoints. Each is a usnic_rel endpoint with a tagged
 * messaging context; the AV's addresses are mirrored into the endpoint's own
 * address vector as they arrive (fi_addr -> peer handle and back).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

static int urel_fi_grow(void **arr, size_t *n, size_t want, size_t esz, unsigned char fill)
{
	size_t cap = *n ? *n : 64;
	unsigned char *grown;

	if (want <= *n)
		return 0;
	while (cap < want)
		cap *= 2;
	grown = realloc(*arr, cap * esz);
	if (!grown)
		return -FI_ENOMEM;
	memset(grown + *n * esz, fill, (cap - *n) * esz);
	*arr = grown;
	*n = cap;
	return 0;
}

/* Called with the AV's lock held; @addr indexes ep->av->ent. */
int urel_fi_ep_add_peer(struct urel_fi_ep *ep, fi_addr_t addr, const struct sockaddr *sa,
			socklen_t len)
{
	urel_peer_t peer = 0;
	int ret;

	urel_fi_ep_lock(ep);
	ret = urel_fi_grow((void **)&ep->peer_of, &ep->npeer_of, addr + 1, sizeof(*ep->peer_of), 0);
	if (ret)
		goto out;
	ret = urel_av_insert(ep->uep, sa, len, &peer);
	if (ret == -EEXIST) {
		/* The same address twice in the AV: both name one peer. */
		for (size_t i = 0; i < ep->npeer_of && !peer; i++) {
			const struct urel_fi_av_entry *e = &ep->av->ent[i];

			if (ep->peer_of[i] && i != addr && e->len == len &&
			    !memcmp(&e->addr, sa, len))
				peer = ep->peer_of[i];
		}
		ret = peer ? 0 : -FI_EINVAL;
	}
	if (ret) {
		UREL_FI_WARN(FI_LOG_AV, "cannot add address %llu: %s\n", (unsigned long long)addr,
			     urel_strerror(ret));
		goto out;
	}
	ret = urel_fi_grow((void **)&ep->addr_of, &ep->naddr_of, peer + 1, sizeof(*ep->addr_of),
			   0xff);
	if (ret)
		goto out;
	ep->peer_of[addr] = peer;
	if (ep->addr_of[peer] == FI_ADDR_NOTAVAIL)
		ep->addr_of[peer] = addr;
	UREL_FI_DBG(FI_LOG_AV, "fi_addr %llu is peer %u\n", (unsigned long long)addr, peer);
out:
	urel_fi_ep_unlock(ep);
	return ret ? -urel_fi_errno(ret) : 0;
}

void urel_fi_ep_del_peer(struct urel_fi_ep *ep, fi_addr_t addr)
{
	urel_peer_t peer;
	bool shared = false;

	urel_fi_ep_lock(ep);
	if (addr >= ep->npeer_of || !ep->peer_of[addr]) {
		urel_fi_ep_unlock(ep);
		return;
	}
	peer = ep->peer_of[addr];
	ep->peer_of[addr] = 0;
	for (size_t i = 0; i < ep->npeer_of && !shared; i++) {
		if (ep->peer_of[i] == peer) {
			shared = true;
			ep->addr_of[peer] = i;
		}
	}
	if (!shared) {
		ep->addr_of[peer] = FI_ADDR_NOTAVAIL;
		urel_av_remove(ep->uep, peer);
	}
	urel_fi_ep_unlock(ep);
}

/*
 * A CQ poll's pass. The library's pass takes no lock when it finds nothing
 * to do, and is safe without ep->lock (the RMA completions it may call
 * only count, atomically: rma.c); then, when no request of the library
 * completed since the operations were last tested (urel_fi_ep_collect()),
 * there is nothing to test, and a busy poll that finds nothing takes no
 * lock at all. @seen is read before the pass: what completes during it
 * moves the count.
 */
void urel_fi_ep_progress(struct urel_fi_ep *ep)
{
	uint64_t seen = __atomic_load_n(&ep->reaped_at, __ATOMIC_ACQUIRE), count;
	int ret = urel_msg_progress(ep->m);

	if (ret < 0)
		UREL_FI_WARN(FI_LOG_EP_DATA, "progress: %s\n", urel_strerror(ret));
	if (seen != UREL_FI_REAP_DUE && !urel_msg_completions(ep->m, &count) && count == seen)
		return;
	urel_fi_ep_lock(ep);
	urel_fi_ep_collect(ep);
	urel_fi_ep_unlock(ep);
}

static int urel_fi_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid.fid);
	int ret;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_CQ: {
		struct urel_fi_cq *cq = container_of(bfid, struct urel_fi_cq, fid.fid);

		if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
			return -FI_EBADFLAGS;
		if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
			return -FI_EINVAL;
		ret = urel_fi_cq_bind_ep(cq, ep);
		if (ret)
			return ret;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
		}
		return 0;
	}
	case FI_CLASS_AV: {
		struct urel_fi_av *av = container_of(bfid, struct urel_fi_av, fid.fid);

		if (ep->av)
			return -FI_EINVAL;
		ep->av = av;
		ret = urel_fi_av_bind_ep(av, ep);
		if (ret) {
			urel_fi_av_unbind_ep(av, ep);
			ep->av = NULL;
		}
		return ret;
	}
	case FI_CLASS_EQ:
		return 0; /* RDM endpoints have no connection events to report */
	default:
		return -FI_ENOSYS;
	}
}

static int urel_fi_ep_control(struct fid *fid, int command, void *arg)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid.fid);
	uint64_t *of = arg;

	switch (command) {
	case FI_ENABLE:
		if (!ep->av || (!ep->tx_cq && !ep->rx_cq))
			return -FI_ENOCQ;
		ep->enabled = true;
		return 0;
	case FI_GETOPSFLAG:
		if (*of & FI_TRANSMIT)
			*of = ep->tx_flags;
		else if (*of & FI_RECV)
			*of = ep->rx_flags;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		if (*of & FI_TRANSMIT)
			ep->tx_flags = *of & ~FI_TRANSMIT;
		else if (*of & FI_RECV)
			ep->rx_flags = *of & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* Large sends registered piecewise under RLIMIT_MEMLOCK (usnicrel_msg(7)), if any. */
static void urel_fi_ep_log_windows(struct urel_fi_ep *ep)
{
	struct urel_msg_rndv_stats rs;

	if (urel_msg_rndv_stats(ep->m, &rs) || !(rs.windows || rs.pin_waits || rs.failures))
		return;
	UREL_FI_INFO(FI_LOG_EP_CTRL,
		     "piecewise rendezvous: %llu windows, %llu bytes, %llu waits for pinned "
		     "memory, %llu failed sends; process peak %llu bytes pinned\n",
		     (unsigned long long)rs.windows, (unsigned long long)rs.window_bytes,
		     (unsigned long long)rs.pin_waits, (unsigned long long)rs.failures,
		     (unsigned long long)rs.pinned_peak);
}

static int urel_fi_ep_close(struct fid *fid)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid.fid);
	bool drained;

	/* Writes and reads still under way finish first (bounded: a peer may be gone). */
	drained = urel_fi_rma_drain(ep, 2000);
	UREL_FI_INFO(FI_LOG_EP_CTRL,
		     "endpoint closed: %llu sends, %llu receives, %llu writes, %llu reads, "
		     "%llu atomics\n",
		     ep->posted[UREL_FI_POSTED_SEND], ep->posted[UREL_FI_POSTED_RECV],
		     ep->posted[2 + UREL_FI_RMA_WRITE], ep->posted[2 + UREL_FI_RMA_READ],
		     ep->posted[2 + UREL_FI_RMA_ATOMIC]);
	urel_fi_ep_log_windows(ep);
	if (ep->tx_cq)
		urel_fi_cq_unbind_ep(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		urel_fi_cq_unbind_ep(ep->rx_cq, ep);
	ep->tx_cq = ep->rx_cq = NULL;
	if (ep->av)
		urel_fi_av_unbind_ep(ep->av, ep);
	/* Closing the context frees its requests: drop ours first. */
	while (ep->ops) {
		struct urel_fi_op *op = ep->ops;

		ep->ops = op->next;
		urel_fi_op_free(ep, op);
	}
	urel_fi_op_free_spares(ep);
	urel_msg_close(ep->m);
	urel_fi_note_close(ep);
	/* The domain keeps a drained endpoint that registrations still name. */
	urel_fi_domain_ep_put(ep->dom, ep, drained && !ep->nrma);
	urel_fi_rma_free_all(ep);
	free(ep->peer_of);
	free(ep->addr_of);
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return 0;
}

static struct fi_ops urel_fi_ep_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_ep_close,
	.bind = urel_fi_ep_bind,
	.control = urel_fi_ep_control,
	.ops_open = urel_fi_no_ops_open,
};

static int urel_fi_ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int urel_fi_ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int urel_fi_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			     struct fid_ep **tx_ep, void *context)
{
	(void)sep, (void)index, (void)attr, (void)tx_ep, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			     struct fid_ep **rx_ep, void *context)
{
	(void)sep, (void)index, (void)attr, (void)rx_ep, (void)context;
	return -FI_ENOSYS;
}

static ssize_t urel_fi_ep_rx_left(struct fid_ep *fid)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid);

	return UREL_FI_QUEUE_SIZE - ep->nrx;
}

static ssize_t urel_fi_ep_tx_left(struct fid_ep *fid)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid);

	return UREL_FI_QUEUE_SIZE - ep->ntx;
}

static struct fi_ops_ep urel_fi_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = urel_fi_ep_cancel,
	.getopt = urel_fi_ep_getopt,
	.setopt = urel_fi_ep_setopt,
	.tx_ctx = urel_fi_no_tx_ctx,
	.rx_ctx = urel_fi_no_rx_ctx,
	.rx_size_left = urel_fi_ep_rx_left,
	.tx_size_left = urel_fi_ep_tx_left,
};

static int urel_fi_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct urel_fi_ep *ep = container_of(fid, struct urel_fi_ep, fid.fid);
	struct urel_ep_info info;
	size_t len;
	int ret;

	ret = urel_ep_query(ep->uep, &info);
	if (ret)
		return ret;
	len = info.addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					      : sizeof(struct sockaddr_in);
	if (*addrlen < len) {
		*addrlen = len;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &info.addr, len);
	*addrlen = len;
	return 0;
}

static int urel_fi_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int urel_fi_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int urel_fi_connect(struct fid_ep *ep, const void *addr, const void *param, size_t len)
{
	(void)ep, (void)addr, (void)param, (void)len;
	return -FI_ENOSYS;
}

static int urel_fi_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int urel_fi_accept(struct fid_ep *ep, const void *param, size_t len)
{
	(void)ep, (void)param, (void)len;
	return -FI_ENOSYS;
}

static int urel_fi_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t len)
{
	(void)pep, (void)handle, (void)param, (void)len;
	return -FI_ENOSYS;
}

/* Nothing to tear down between RDM endpoints: the endpoint stays usable. */
static int urel_fi_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep, (void)flags;
	return 0;
}

static int urel_fi_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
			void *context)
{
	(void)ep, (void)addr, (void)flags, (void)mc, (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm urel_fi_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = urel_fi_setname,
	.getname = urel_fi_getname,
	.getpeer = urel_fi_getpeer,
	.connect = urel_fi_connect,
	.listen = urel_fi_listen,
	.accept = urel_fi_accept,
	.reject = urel_fi_reject,
	.shutdown = urel_fi_shutdown,
	.join = urel_fi_join,
};

int urel_fi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp,
		    void *context)
{
	struct urel_fi_domain *d = container_of(domain, struct urel_fi_domain, fid);
	const struct sockaddr *src = (struct sockaddr *)&d->src;
	socklen_t srclen = d->srclen;
	struct urel_ep_info uinfo;
	struct urel_fi_ep *ep;
	int ret;

	if (!info || (info->ep_attr && info->ep_attr->type != FI_EP_RDM &&
		      info->ep_attr->type != FI_EP_UNSPEC))
		return -FI_EINVAL;
	if (info->src_addr && info->src_addrlen <= sizeof(struct sockaddr_storage)) {
		src = info->src_addr;
		srclen = (socklen_t)info->src_addrlen;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = d;
	ep->caps = info->caps ? info->caps : UREL_FI_CAPS;
	ep->tx_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->locked = d->ep_locks;
	pthread_mutex_init(&ep->lock, NULL);
	ep->reaped_at = UREL_FI_REAP_DUE;
	ret = urel_fi_domain_ep_get(d, ep, src, srclen, &ep->uep);
	if (ret) {
		UREL_FI_WARN(FI_LOG_EP_CTRL, "cannot create the endpoint: %s\n",
			     urel_strerror(ret));
		goto err;
	}
	/* A put or get the staging area holds with room to spare (as the library's osc does). */
	ret = urel_ep_query(ep->uep, &uinfo);
	if (!ret) {
		ep->rma_piece = uinfo.max_msg[UREL_CHAN_DATA];
		if (ep->rma_piece > uinfo.staging_size / 4)
			ep->rma_piece = uinfo.staging_size / 4;
		if (!ep->rma_piece)
			ret = -EMSGSIZE;
	}
	if (!ret)
		ret = urel_msg_open(ep->uep, NULL, &ep->m);
	if (!ret) {
		ret = urel_fi_note_open(ep);
		if (ret) {
			urel_msg_close(ep->m);
			urel_fi_note_close(ep);
		}
	}
	if (ret) {
		UREL_FI_WARN(FI_LOG_EP_CTRL, "cannot start tagged messaging: %s\n",
			     urel_strerror(ret));
		urel_fi_domain_ep_put(d, ep, true);
		goto err;
	}
	ep->fid.fid.fclass = FI_CLASS_EP;
	ep->fid.fid.context = context;
	ep->fid.fid.ops = &urel_fi_ep_fid_ops;
	ep->fid.ops = &urel_fi_ep_ops;
	ep->fid.cm = &urel_fi_cm_ops;
	ep->fid.msg = &urel_fi_msg_ops;
	ep->fid.tagged = &urel_fi_tagged_ops;
	ep->fid.rma = &urel_fi_rma_ops;
	ep->fid.atomic = &urel_fi_atomic_ops;
	*epp = &ep->fid;
	return 0;
err:
	pthread_mutex_destroy(&ep->lock);
	free(ep);
	return -urel_fi_errno(ret);
}
