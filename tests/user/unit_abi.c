// SPDX-License-Identifier: MIT
/*
 * Host unit test: how urel_device_open() reacts to the module's answer to the
 * ABI handshake. This program defines ioctl() itself, so the library linked
 * into it calls this shim instead of libc's: USNIC_REL_IOC_GET_ABI on any fd
 * reports abi_version (or fails with abi_errno), other requests go to the
 * real ioctl(). The device node is /dev/null; only the library's reaction is
 * under test, not the kernel's.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/ioctl.h>

#include <uapi/usnic_rel.h>
#include <usnicrel.h>

#include "urt.h"

static unsigned int abi_version;
static int abi_errno; /* nonzero: GET_ABI fails with it */
static int abi_calls;

int ioctl(int fd, unsigned long request, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (request == USNIC_REL_IOC_GET_ABI) {
		struct usnic_rel_abi_info *info = arg;

		abi_calls++;
		if (abi_errno) {
			errno = abi_errno;
			return -1;
		}
		memset(info, 0, sizeof(*info));
		info->abi_version = abi_version;
		return 0;
	}
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, request, arg);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Open with the module claiming @version; returns urel_device_open()'s result. */
static int open_as(unsigned int version, int err)
{
	struct urel_device *dev = (struct urel_device *)1;
	int fds = open_fds(), calls = abi_calls, ret;

	abi_version = version;
	abi_errno = err;
	ret = urel_device_open("/dev/null", &dev);
	URT_CHECK_EQ(abi_calls, calls + 1);
	if (ret) {
		URT_CHECK(dev == NULL);
		/* A refused open leaves no descriptor behind. */
		URT_CHECK_EQ(open_fds(), fds);
		return ret;
	}
	URT_CHECK(dev != NULL);
	URT_CHECK_EQ(urel_device_abi_version(dev), version);
	URT_CHECK(urel_device_fd(dev) >= 0);
	urel_device_close(dev);
	URT_CHECK_EQ(open_fds(), fds);
	return ret;
}

int main(void)
{
	unsigned int mine = urel_library_abi_version();

	URT_CHECK_EQ(mine, USNIC_REL_ABI_VERSION);
	/* The matching version is accepted, so the shim does reach the check. */
	URT_CHECK_EQ(open_as(mine, 0), 0);
	/* Any other version, newer or older, is refused with -EPROTO. */
	URT_CHECK_EQ(open_as(mine + 1, 0), -EPROTO);
	URT_CHECK_EQ(open_as(mine - 1, 0), -EPROTO);
	URT_CHECK_EQ(open_as(0, 0), -EPROTO);
	URT_CHECK_EQ(open_as(~0U, 0), -EPROTO);
	/* ... with a message that names the cause. */
	URT_CHECK(strstr(urel_strerror(-EPROTO), "ABI") != NULL);
	/* A node that does not know the request is not a usnic_rel device. */
	URT_CHECK_EQ(open_as(mine, EINVAL), -ENOTTY);
	URT_CHECK_EQ(open_as(mine, ENOTTY), -ENOTTY);
	/* Other failures of the handshake are passed on. */
	URT_CHECK_EQ(open_as(mine, EFAULT), -EFAULT);
	return urt_done("unit_abi");
}
