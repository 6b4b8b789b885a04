// SPDX-License-Identifier: MIT
/*
 * urel provider: the domain, one open usnic_rel device. Endpoints bind the
 * info's source address; no memory registration is needed for messages.
 */
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

static int urel_fi_domain_close(struct fid *fid)
{
	struct urel_fi_domain *d = container_of(fid, struct urel_fi_domain, fid.fid);

	urel_device_close(d->dev);
	free(d);
	return 0;
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

static int urel_fi_no_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
			     struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain, (void)datatype, (void)op, (void)attr, (void)flags;
	return -FI_EOPNOTSUPP;
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
	.query_atomic = urel_fi_no_atomic,
};

static int urel_fi_no_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
			     uint64_t offset, uint64_t requested_key, uint64_t flags,
			     struct fid_mr **mr, void *context)
{
	(void)fid, (void)buf, (void)len, (void)access, (void)offset, (void)requested_key;
	(void)flags, (void)mr, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
			      uint64_t access, uint64_t offset, uint64_t requested_key,
			      uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid, (void)iov, (void)count, (void)access, (void)offset, (void)requested_key;
	(void)flags, (void)mr, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
				 struct fid_mr **mr)
{
	(void)fid, (void)attr, (void)flags, (void)mr;
	return -FI_ENOSYS;
}

static struct fi_ops_mr urel_fi_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = urel_fi_no_mr_reg,
	.regv = urel_fi_no_mr_regv,
	.regattr = urel_fi_no_mr_regattr,
};

int urel_fi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domp,
			void *context)
{
	struct urel_fi_domain *d;
	int ret;

	(void)fabric;
	if (!info || !info->src_addr || info->src_addrlen > sizeof(d->src))
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, UREL_FI_NAME))
		return -FI_EINVAL;
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
	d->fid.fid.fclass = FI_CLASS_DOMAIN;
	d->fid.fid.context = context;
	d->fid.fid.ops = &urel_fi_domain_fid_ops;
	d->fid.ops = &urel_fi_domain_ops;
	d->fid.mr = &urel_fi_mr_ops;
	*domp = &d->fid;
	return 0;
}
