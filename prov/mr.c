// SPDX-License-Identifier: MIT
/*
 * urel provider: memory registration. fi_mr_reg pins the memory through the
 * library on the domain's RMA endpoint (domain.c); the provider key is the
 * module's rkey, and remote addresses are offsets in the registration
 * (UREL_FI_MR_MODE). Messages need no registration: fi_mr_desc is only
 * there for applications that pass one anyway.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

/*
 * libfabric's rights as the module's: remote write covers atomics, which
 * libfabric counts as writes. No rights named means every right.
 */
static unsigned int urel_fi_mr_access(uint64_t access)
{
	unsigned int a = 0;

	if (!(access & (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		access = FI_RECV | FI_READ | FI_REMOTE_READ | FI_REMOTE_WRITE;
	if (access & (FI_RECV | FI_READ))
		a |= UREL_ACCESS_LOCAL_WRITE;
	if (access & FI_REMOTE_READ)
		a |= UREL_ACCESS_REMOTE_READ;
	if (access & FI_REMOTE_WRITE)
		a |= UREL_ACCESS_REMOTE_WRITE | UREL_ACCESS_REMOTE_ATOMIC;
	return a;
}

static int urel_fi_mr_close(struct fid *fid)
{
	struct urel_fi_mr *m = container_of(fid, struct urel_fi_mr, fid.fid);
	struct urel_fi_domain *d = m->dom;
	int ret;

	pthread_mutex_lock(&d->lock);
	for (struct urel_fi_mr **p = &d->mrs; *p; p = &(*p)->next) {
		if (*p == m) {
			*p = m->next;
			break;
		}
	}
	ret = urel_mr_dereg(m->mr);
	if (ret)
		UREL_FI_INFO(FI_LOG_MR, "deregistration: %s\n", urel_strerror(ret));
	d->nmr--;
	/* The last registration of a parked endpoint: nothing is left for it to serve. */
	if (!d->nmr && d->rma_uep && !d->rma_owner) {
		urel_ep_destroy(d->rma_uep);
		d->rma_uep = NULL;
	}
	pthread_mutex_unlock(&d->lock);
	free(m);
	return 0;
}

/* Binding to the endpoint whose peers use the key: it must be the domain's RMA endpoint. */
static int urel_fi_mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct urel_fi_mr *m = container_of(fid, struct urel_fi_mr, fid.fid);
	struct urel_fi_ep *ep;
	int ret;

	(void)flags;
	if (bfid->fclass != FI_CLASS_EP)
		return -FI_ENOSYS;
	ep = container_of(bfid, struct urel_fi_ep, fid.fid);
	pthread_mutex_lock(&m->dom->lock);
	ret = ep->dom == m->dom && ep == m->dom->rma_owner ? 0 : -FI_EINVAL;
	pthread_mutex_unlock(&m->dom->lock);
	return ret;
}

static int urel_fi_mr_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)arg;
	return command == FI_ENABLE ? 0 : -FI_ENOSYS;
}

static struct fi_ops urel_fi_mr_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_mr_close,
	.bind = urel_fi_mr_bind,
	.control = urel_fi_mr_control,
	.ops_open = urel_fi_no_ops_open,
};

static int urel_fi_mr_new(struct urel_fi_domain *d, void *buf, size_t len, uint64_t access,
			  uint64_t offset, void *context, struct fid_mr **mrp)
{
	struct urel_fi_mr *m;
	int ret;

	/* Remote addresses are offsets from the start: another origin is not offered. */
	if (!buf || !len || offset)
		return -FI_EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	pthread_mutex_lock(&d->lock);
	ret = 0;
	if (!d->rma_uep) {
		ret = urel_ep_create_flags(d->dev, (struct sockaddr *)&d->src, d->srclen, NULL,
					   d->uep_flags, &d->rma_uep);
		if (ret)
			d->rma_uep = NULL;
	}
	if (!ret)
		ret = urel_mr_reg(d->rma_uep, buf, len, urel_fi_mr_access(access), &m->mr);
	if (ret) {
		if (!d->nmr && d->rma_uep && !d->rma_owner) {
			urel_ep_destroy(d->rma_uep);
			d->rma_uep = NULL;
		}
		pthread_mutex_unlock(&d->lock);
		UREL_FI_WARN(FI_LOG_MR, "cannot register %zu bytes: %s\n", len, urel_strerror(ret));
		free(m);
		return ret == -ENOMEM ? -FI_ENOMEM : -urel_fi_errno(ret);
	}
	d->nmr++;
	m->key = urel_mr_rkey(m->mr);
	m->len = len;
	m->remote_write = urel_fi_mr_access(access) & UREL_ACCESS_REMOTE_WRITE;
	m->next = d->mrs;
	d->mrs = m;
	pthread_mutex_unlock(&d->lock);
	m->dom = d;
	m->fid.fid.fclass = FI_CLASS_MR;
	m->fid.fid.context = context;
	m->fid.fid.ops = &urel_fi_mr_fid_ops;
	m->fid.key = urel_mr_rkey(m->mr);
	m->fid.mem_desc = m;
	*mrp = &m->fid;
	UREL_FI_DBG(FI_LOG_MR, "registered %p+%zu key %#llx\n", buf, len,
		    (unsigned long long)m->fid.key);
	return 0;
}

/*
 * Would the module have taken a write to @ep of @len bytes at @off under @key? A
 * notice of a write with CQ data is reported only then (note.c): the module
 * refuses a bad write without telling the target process.
 */
bool urel_fi_mr_writable(struct urel_fi_ep *ep, uint64_t key, uint64_t off, uint64_t len)
{
	struct urel_fi_domain *d = ep->dom;
	bool ok = false;

	pthread_mutex_lock(&d->lock);
	/* Keys are the RMA endpoint's: a put to another endpoint was refused. */
	for (const struct urel_fi_mr *m = d->rma_owner == ep ? d->mrs : NULL; m; m = m->next) {
		if (m->key == key) {
			ok = m->remote_write && off <= m->len && len <= m->len - off;
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return ok;
}

static struct urel_fi_domain *urel_fi_dom_of(struct fid *fid)
{
	return fid->fclass == FI_CLASS_DOMAIN ? container_of(fid, struct urel_fi_domain, fid.fid)
					      : NULL;
}

static int urel_fi_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
			  uint64_t offset, uint64_t requested_key, uint64_t flags,
			  struct fid_mr **mr, void *context)
{
	struct urel_fi_domain *d = urel_fi_dom_of(fid);

	(void)requested_key, (void)flags; /* FI_MR_PROV_KEY: the key is ours */
	if (!d)
		return -FI_EINVAL;
	return urel_fi_mr_new(d, (void *)buf, len, access, offset, context, mr);
}

static int urel_fi_mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
			   uint64_t offset, uint64_t requested_key, uint64_t flags,
			   struct fid_mr **mr, void *context)
{
	struct urel_fi_domain *d = urel_fi_dom_of(fid);

	(void)requested_key, (void)flags;
	if (!d || count != 1) /* mr_iov_limit 1 */
		return -FI_EINVAL;
	return urel_fi_mr_new(d, iov[0].iov_base, iov[0].iov_len, access, offset, context, mr);
}

static int urel_fi_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
			      struct fid_mr **mr)
{
	struct urel_fi_domain *d = urel_fi_dom_of(fid);

	(void)flags;
	if (!d || !attr || attr->iov_count != 1 || attr->iface != FI_HMEM_SYSTEM)
		return -FI_EINVAL;
	return urel_fi_mr_new(d, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access,
			      attr->offset, attr->context, mr);
}

struct fi_ops_mr urel_fi_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = urel_fi_mr_reg,
	.regv = urel_fi_mr_regv,
	.regattr = urel_fi_mr_regattr,
};
