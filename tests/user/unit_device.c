// SPDX-License-Identifier: MIT
/*
 * Host unit test: opening the device fails cleanly with an explanation when the
 * node is missing or is not a usnic_rel device, and error messages are useful.
 */
#include <errno.h>
#include <stdlib.h>

#include <uapi/usnic_rel.h>
#include <usnicrel.h>

#include "urt.h"

int main(void)
{
	struct urel_device *dev = (struct urel_device *)1;

	URT_CHECK_EQ(urel_device_open("/nonexistent/usnic_rel", &dev), -ENOENT);
	URT_CHECK(dev == NULL);
	URT_CHECK_EQ(urel_device_open("/dev/null", &dev), -ENOTTY);
	URT_CHECK(dev == NULL);
	URT_CHECK_EQ(urel_device_open(NULL, NULL), -EINVAL);

	setenv("USNIC_REL_DEVICE", "/nonexistent/from-env", 1);
	URT_CHECK_EQ(urel_device_open(NULL, &dev), -ENOENT);
	unsetenv("USNIC_REL_DEVICE");

	URT_CHECK(strstr(urel_strerror(-ENOENT), "modprobe usnic_rel") != NULL);
	URT_CHECK(strstr(urel_strerror(-EPROTO), "ABI") != NULL);
	/* -EACCES covers both the device node and a privileged port. */
	URT_CHECK(strstr(urel_strerror(-EACCES), "device node") != NULL);
	URT_CHECK(strstr(urel_strerror(-EACCES), "privileged port") != NULL);
	URT_CHECK(strcmp(urel_strerror(ENOTTY), urel_strerror(-ENOTTY)) == 0);
	URT_CHECK(strcmp(urel_strerror(0), "success") == 0);
	URT_CHECK(urel_strerror(-ENOMEM) != NULL);

	URT_CHECK_EQ(urel_library_abi_version(), USNIC_REL_ABI_VERSION);
	URT_CHECK_EQ(urel_device_abi_version(NULL), 0);
	urel_device_close(NULL);
	return urt_done("unit_device");
}
