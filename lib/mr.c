// SPDX-License-Identifier: MIT
/*
 * libusnicrel: memory registration. The module pins the pages and names the
 * registration with a random 64-bit rkey that peers of one endpoint use in
 * one-sided operations.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "internal.h"

UREL_API int urel_mr_reg(struct urel_ep *ep, void *addr, size_t length, unsigned int access,
			 struct urel_mr **mrp)
{
	struct usnic_rel_reg_mr arg = {
		.size = sizeof(arg),
		.addr = (uintptr_t)addr,
		.length = length,
		.access = access,
	};
	struct urel_device *dev;
	struct urel_mr *mr;
	int ret;

	if (!mrp)
		return -EINVAL;
	*mrp = NULL;
	if (!ep || !addr || !length || access & ~USNIC_REL_ACCESS_ALL)
		return -EINVAL;
	dev = ep->dev;
	arg.ep_id = ep->info.ep_id;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	if (ioctl(dev->fd, USNIC_REL_IOC_REG_MR, &arg) < 0) {
		ret = -errno;
		free(mr);
		return ret;
	}
	mr->dev = dev;
	mr->rkey = arg.rkey;
	urel_device_add_mr(dev, mr);
	*mrp = mr;
	return 0;
}

int urel_mr_teardown(struct urel_mr *mr)
{
	struct usnic_rel_dereg_mr arg = {
		.size = sizeof(arg),
		.rkey = mr->rkey,
	};
	int ret = ioctl(mr->dev->fd, USNIC_REL_IOC_DEREG_MR, &arg) < 0 ? -errno : 0;

	free(mr);
	return ret;
}

UREL_API int urel_mr_dereg(struct urel_mr *mr)
{
	if (!mr)
		return -EINVAL;
	urel_device_remove_mr(mr->dev, mr);
	return urel_mr_teardown(mr);
}

UREL_API uint64_t urel_mr_rkey(const struct urel_mr *mr)
{
	return mr ? mr->rkey : 0;
}
