// SPDX-License-Identifier: MIT
/*
 * libusnicrel: opening the device and the ABI handshake with the module; the
 * device keeps its endpoints and registrations so that closing it frees them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

UREL_API int urel_device_open(const char *path, struct urel_device **devp)
{
	struct usnic_rel_abi_info info = { 0 };
	struct urel_device *dev;
	int fd, ret;

	if (!devp)
		return -EINVAL;
	*devp = NULL;
	if (!path)
		path = getenv("USNIC_REL_DEVICE");
	if (!path || !*path)
		path = UREL_DEFAULT_DEVICE;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, USNIC_REL_IOC_GET_ABI, &info) < 0) {
		ret = errno == EINVAL ? -ENOTTY : -errno;
		goto err_close;
	}
	if (info.abi_version != USNIC_REL_ABI_VERSION) {
		ret = -EPROTO;
		goto err_close;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		ret = -ENOMEM;
		goto err_close;
	}
	dev->fd = fd;
	dev->abi_version = info.abi_version;
	pthread_mutex_init(&dev->lock, NULL);
	*devp = dev;
	return 0;

err_close:
	close(fd);
	return ret;
}

UREL_API void urel_device_close(struct urel_device *dev)
{
	if (!dev)
		return;
	while (dev->eps) {
		struct urel_ep *ep = dev->eps;

		dev->eps = ep->next;
		urel_ep_teardown(ep);
	}
	while (dev->mrs) {
		struct urel_mr *mr = dev->mrs;

		dev->mrs = mr->next;
		urel_mr_teardown(mr);
	}
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

UREL_API unsigned int urel_device_abi_version(const struct urel_device *dev)
{
	return dev ? dev->abi_version : 0;
}

UREL_API unsigned int urel_library_abi_version(void)
{
	return USNIC_REL_ABI_VERSION;
}

UREL_API int urel_device_fd(const struct urel_device *dev)
{
	return dev ? dev->fd : -EINVAL;
}

void urel_device_add_ep(struct urel_device *dev, struct urel_ep *ep)
{
	pthread_mutex_lock(&dev->lock);
	ep->next = dev->eps;
	dev->eps = ep;
	pthread_mutex_unlock(&dev->lock);
}

void urel_device_remove_ep(struct urel_device *dev, struct urel_ep *ep)
{
	pthread_mutex_lock(&dev->lock);
	for (struct urel_ep **p = &dev->eps; *p; p = &(*p)->next) {
		if (*p == ep) {
			*p = ep->next;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
}

void urel_device_add_mr(struct urel_device *dev, struct urel_mr *mr)
{
	pthread_mutex_lock(&dev->lock);
	mr->next = dev->mrs;
	dev->mrs = mr;
	pthread_mutex_unlock(&dev->lock);
}

void urel_device_remove_mr(struct urel_device *dev, struct urel_mr *mr)
{
	pthread_mutex_lock(&dev->lock);
	for (struct urel_mr **p = &dev->mrs; *p; p = &(*p)->next) {
		if (*p == mr) {
			*p = mr->next;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
}
