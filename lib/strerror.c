// SPDX-License-Identifier: MIT
/*
 * libusnicrel: messages for the error codes the library returns, saying what
 * to do where there is something to do.
 */
#include <errno.h>
#include <string.h>

#include <usnicrel.h>

#include "internal.h"

UREL_API const char *urel_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case ENOENT:
		return "no usnic_rel device node: load the module (modprobe usnic_rel) or set "
		       "USNIC_REL_DEVICE";
	case ENOTTY:
		return "not a usnic_rel device";
	case EPROTO:
		return "the usnic_rel module and libusnicrel speak different ABI versions: install "
		       "matching builds";
	case EACCES:
		return "permission denied on the usnic_rel device node";
	default:
		return strerror(err);
	}
}
