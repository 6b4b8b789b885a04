// SPDX-License-Identifier: MIT
/*
 * In-VM test: with the module loaded, the library opens /dev/usnic_rel, agrees
 * on the ABI version, and unknown ioctls are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <uapi/usnic_rel.h>
#include <usnicrel.h>

#include "urt.h"

int main(void)
{
	struct usnic_rel_abi_info info;
	struct urel_device *dev = NULL;
	int ret, fd;

	ret = urel_device_open(NULL, &dev);
	URT_CHECK_EQ(ret, 0);
	if (ret)
		return urt_done("vm_device");
	URT_CHECK_EQ(urel_device_abi_version(dev), USNIC_REL_ABI_VERSION);
	urel_device_close(dev);

	fd = open(UREL_DEFAULT_DEVICE, O_RDWR);
	URT_CHECK(fd >= 0);
	URT_CHECK_EQ(ioctl(fd, _IO(0xB7, 0x7f)), -1);
	URT_CHECK_EQ(errno, ENOTTY);
	URT_CHECK_EQ(ioctl(fd, USNIC_REL_IOC_GET_ABI, (void *)8), -1);
	URT_CHECK_EQ(errno, EFAULT);
	URT_CHECK_EQ(ioctl(fd, USNIC_REL_IOC_GET_ABI, &info), 0);
	URT_CHECK_EQ(info.abi_version, USNIC_REL_ABI_VERSION);
	close(fd);
	return urt_done("vm_device");
}
