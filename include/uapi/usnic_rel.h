/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * usnic_rel: reliable datagrams and emulated RDMA over UDP.
 * The ioctl ABI between /dev/usnic_rel and its userspace library.
 */
#ifndef _UAPI_USNIC_REL_H
#define _UAPI_USNIC_REL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * Bumped on any incompatible change of this header or of the ring layouts.
 * The library refuses to run against a module with another version.
 */
#define USNIC_REL_ABI_VERSION	1

#define USNIC_REL_DEVICE_NAME	"usnic_rel"

struct usnic_rel_abi_info {
	__u32 abi_version;	/* out: USNIC_REL_ABI_VERSION of the module */
	__u32 flags;		/* out: reserved, zero */
	__u64 reserved[3];	/* out: zero */
};

#define USNIC_REL_IOC_MAGIC	0xB7
#define USNIC_REL_IOC_GET_ABI	_IOR(USNIC_REL_IOC_MAGIC, 0x00, struct usnic_rel_abi_info)

#endif /* _UAPI_USNIC_REL_H */
