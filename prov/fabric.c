// SPDX-License-Identifier: MIT
/*
 * urel provider: the fabric and its event queue. RDM endpoints have no
 * connection events, so the queue only ever reports what the application
 * wrote into it.
 */
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

static int urel_fi_fabric_close(struct fid *fid)
{
	free(container_of(fid, struct urel_fi_fabric, fid.fid));
	return 0;
}

static struct fi_ops urel_fi_fabric_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_fabric_close,
	.bind = urel_fi_no_bind,
	.control = urel_fi_no_control,
	.ops_open = urel_fi_no_ops_open,
};

static int urel_fi_eq_close(struct fid *fid)
{
	free(container_of(fid, struct urel_fi_eq, fid.fid));
	return 0;
}

static ssize_t urel_fi_eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len,
			       uint64_t flags)
{
	(void)eq, (void)event, (void)buf, (void)len, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t urel_fi_eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)eq, (void)buf, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t urel_fi_eq_write(struct fid_eq *eq, uint32_t event, const void *buf, size_t len,
				uint64_t flags)
{
	(void)eq, (void)event, (void)buf, (void)len, (void)flags;
	return -FI_ENOSYS;
}

static ssize_t urel_fi_eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len,
				int timeout, uint64_t flags)
{
	(void)eq, (void)event, (void)buf, (void)len, (void)timeout, (void)flags;
	return -FI_EAGAIN;
}

static const char *urel_fi_eq_strerror(struct fid_eq *eq, int prov_errno, const void *err_data,
				       char *buf, size_t len)
{
	const char *s = urel_strerror(-prov_errno);

	(void)eq, (void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
	}
	return s;
}

static struct fi_ops urel_fi_eq_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_eq_close,
	.bind = urel_fi_no_bind,
	.control = urel_fi_no_control,
	.ops_open = urel_fi_no_ops_open,
};

static struct fi_ops_eq urel_fi_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = urel_fi_eq_read,
	.readerr = urel_fi_eq_readerr,
	.write = urel_fi_eq_write,
	.sread = urel_fi_eq_sread,
	.strerror = urel_fi_eq_strerror,
};

static int urel_fi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eqp,
			   void *context)
{
	struct urel_fi_eq *eq;

	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->fid.fid.fclass = FI_CLASS_EQ;
	eq->fid.fid.context = context;
	eq->fid.fid.ops = &urel_fi_eq_fid_ops;
	eq->fid.ops = &urel_fi_eq_ops;
	(void)fabric;
	*eqp = &eq->fid;
	return 0;
}

static int urel_fi_no_pep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
			  void *context)
{
	(void)fabric, (void)info, (void)pep, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
				struct fid_wait **waitset)
{
	(void)fabric, (void)attr, (void)waitset;
	return -FI_ENOSYS;
}

static int urel_fi_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric, (void)fids, (void)count;
	return -FI_ENOSYS;
}

static struct fi_ops_fabric urel_fi_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = urel_fi_domain_open,
	.passive_ep = urel_fi_no_pep,
	.eq_open = urel_fi_eq_open,
	.wait_open = urel_fi_no_wait_open,
	.trywait = urel_fi_trywait,
};

int urel_fi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabricp, void *context)
{
	struct urel_fi_fabric *f;

	if (attr->name && strcmp(attr->name, UREL_FI_NAME))
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->fid.fid.fclass = FI_CLASS_FABRIC;
	f->fid.fid.context = context;
	f->fid.fid.ops = &urel_fi_fabric_fid_ops;
	f->fid.ops = &urel_fi_fabric_ops;
	*fabricp = &f->fid;
	return 0;
}
