// SPDX-License-Identifier: MIT
/*
 * urel provider: the domain, one open usnic_rel device. Endpoints bind the
 * info's source address; no memory registration is needed for messages.
 *
 * The library binds a registration to one endpoint, and a peer's RMA reaches
 * the registrations of the endpoint it addresses. So a domain's
 * registrations all belong to one library endpoint: the first fi_endpoint's,
 * or one made by an fi_mr_reg that comes first and handed to the first
 * fi_endpoint (same address). It outlives that endpoint while registrations
 * remain, parked for the next one. Further endpoints of the domain have
 * library endpoints of their own: they initiate RMA but are no targets.
 */
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

static int urel_fi_domain_close(struct fid *fid)
{
	struct urel_fi_domain *d = container_of(fid, struct urel_fi_domain, fid.fid);

	pthread_mutex_lock(&d->lock);
	if (d->nmr || d->rma_owner) {
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	if (d->rma_uep)
		urel_ep_destroy(d->rma_uep);
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_destroy(&d->lock);
	urel_device_close(d->dev);
	free(d);
	return 0;
}

int urel_fi_domain_ep_get(struct urel_fi_domain *d, struct urel_fi_ep *ep,
			  const struct sockaddr *src, socklen_t srclen, struct urel_ep **uep)
{
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (d->rma_uep && !d->rma_owner) {
		if (srclen != d->srclen || memcmp(src, &d->src, srclen)) {
			UREL_FI_WARN(FI_LOG_EP_CTRL,
				     "the domain's registrations are bound to its "
				     "address: an endpoint elsewhere cannot take them\n");
			ret = -FI_EINVAL;
		} else {
			*uep = d->rma_uep;
			d->rma_owner = ep;
		}
		pthread_mutex_unlock(&d->lock);
		return ret;
	}
	ret = urel_ep_create_flags(d->dev, src, srclen, NULL, d->uep_flags, uep);
	if (!ret && !d->rma_uep) {
		d->rma_uep = *uep;
		d->rma_owner = ep;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* @drained: no operation of @ep is outstanding any more, so the endpoint can be parked. */
void urel_fi_domain_ep_put(struct urel_fi_domain *d, struct urel_fi_ep *ep, bool drained)
{
	pthread_mutex_lock(&d->lock);
	if (d->rma_owner == ep) {
		d->rma_owner = NULL;
		if (d->nmr && drained) {
			pthread_mutex_unlock(&d->lock);
			return;
		}
		/* Registrations left behind by an endpoint that did not drain die with it. */
		d->rma_uep = NULL;
	}
	pthread_mutex_unlock(&d->lock);
	urel_ep_destroy(ep->uep);
}

static struct fi_ops urel_fi_domain_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_domain_close,
	.bind = urel_fi_no_bind,
	.control = urel_fi_no_control,
	.ops_open = urel_fi_no_ops_open,
};

static int urel_fi_no_sep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
			  void *context)
{
	(void)domain, (void)info, (void)sep, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_cntr(struct fid_domain *domain, struct fi_cntr_attr *attr,
			   struct fid_cntr **cntr, void *context)
{
	(void)domain, (void)attr, (void)cntr, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_poll(struct fid_domain *domain, struct fi_poll_attr *attr,
			   struct fid_poll **pollset)
{
	(void)domain, (void)attr, (void)pollset;
	return -FI_ENOSYS;
}

static int urel_fi_no_stx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
			  void *context)
{
	(void)domain, (void)attr, (void)stx, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_srx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx,
			  void *context)
{
	(void)domain, (void)attr, (void)rx, (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_domain urel_fi_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = urel_fi_av_open,
	.cq_open = urel_fi_cq_open,
	.endpoint = urel_fi_ep_open,
	.scalable_ep = urel_fi_no_sep,
	.cntr_open = urel_fi_no_cntr,
	.poll_open = urel_fi_no_poll,
	.stx_ctx = urel_fi_no_stx,
	.srx_ctx = urel_fi_no_srx,
	.query_atomic = urel_fi_query_atomic,
};

/* Every level libfabric defines is met: FI_THREAD_SAFE, or cheaper where its promise allows. */
bool urel_fi_threading_ok(enum fi_threading t)
{
	return t >= FI_THREAD_UNSPEC && t <= FI_THREAD_ENDPOINT;
}

/*
 * Which locks the application's promise (fi_domain(3)) leaves necessary.
 * FI_THREAD_DOMAIN: one thread at a time in the whole domain, so neither
 * endpoints nor CQs lock. FI_THREAD_COMPLETION: a CQ and the endpoints bound
 * to it are used by one thread at a time, so CQs need no lock; an endpoint
 * still locks, as an AV it shares with endpoints of other CQs may change its
 * peer table from another thread. FI_THREAD_SAFE, FI_THREAD_FID and
 * FI_THREAD_ENDPOINT: a CQ's reader progresses endpoints other threads post
 * to, and endpoints of several threads push to one CQ: all lock.
 */
static void urel_fi_threading_locks(struct urel_fi_domain *d)
{
	const char *thread = getenv("UREL_MSG_PROGRESS_THREAD");

	d->ep_locks = d->threading != FI_THREAD_DOMAIN;
	d->cq_locks = d->threading != FI_THREAD_DOMAIN && d->threading != FI_THREAD_COMPLETION;
	/*
	 * The library's endpoints skip their own locks under the same promise
	 * (UREL_EP_SERIAL), unless the tagged layer is told to run a progress
	 * thread, which would call on them beside the application. Not at
	 * FI_THREAD_COMPLETION: a library endpoint is created before its CQs
	 * are bound (a send and a receive CQ may be two threads'), and the
	 * domain's registrations use one from any thread.
	 */
	d->uep_flags = 0;
	if (d->threading == FI_THREAD_DOMAIN && !(thread && !strcmp(thread, "1")))
		d->uep_flags = UREL_EP_SERIAL;
}

int urel_fi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domp,
			void *context)
{
	enum fi_threading threading = FI_THREAD_UNSPEC;
	struct urel_fi_domain *d;
	int ret;

	(void)fabric;
	if (!info || !info->src_addr || info->src_addrlen > sizeof(d->src))
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, UREL_FI_NAME))
		return -FI_EINVAL;
	if (info->domain_attr)
		threading = info->domain_attr->threading;
	if (!urel_fi_threading_ok(threading)) {
		UREL_FI_WARN(FI_LOG_DOMAIN, "unknown threading level %d\n", (int)threading);
		return -FI_EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	ret = urel_device_open(NULL, &d->dev);
	if (ret) {
		UREL_FI_WARN(FI_LOG_DOMAIN, "cannot open the usnic_rel device: %s\n",
			     urel_strerror(ret));
		free(d);
		return ret == -ENOENT ? -FI_ENODEV : ret;
	}
	memcpy(&d->src, info->src_addr, info->src_addrlen);
	d->srclen = (socklen_t)info->src_addrlen;
	d->caps = info->caps;
	d->threading = threading == FI_THREAD_UNSPEC ? urel_fi_default_threading() : threading;
	urel_fi_threading_locks(d);
	UREL_FI_INFO(FI_LOG_DOMAIN,
		     "threading %s: endpoint locks %s, CQ locks %s, library locks %s\n",
		     fi_tostr(&d->threading, FI_TYPE_THREADING), d->ep_locks ? "on" : "off",
		     d->cq_locks ? "on" : "off", d->uep_flags & UREL_EP_SERIAL ? "off" : "on");
	pthread_mutex_init(&d->lock, NULL);
	d->fid.fid.fclass = FI_CLASS_DOMAIN;
	d->fid.fid.context = context;
	d->fid.fid.ops = &urel_fi_domain_fid_ops;
	d->fid.ops = &urel_fi_domain_ops;
	d->fid.mr = &urel_fi_mr_ops;
	*domp = &d->fid;
	return 0;
}
