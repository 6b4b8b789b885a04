/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: reliable datagrams and emulated RDMA over the usnic_rel kernel
 * module. Every function returns 0 (or a count) on success and a negative errno
 * on failure; urel_strerror() explains the codes in this library's terms.
 */
#ifndef USNICREL_H
#define USNICREL_H

#ifdef __cplusplus
extern "C" {
#endif

/* The default device node; override with USNIC_REL_DEVICE in the environment. */
#define UREL_DEFAULT_DEVICE "/dev/usnic_rel"

struct urel_device;

/*
 * Open the usnic_rel device at @path (NULL: $USNIC_REL_DEVICE or
 * /dev/usnic_rel) and check that the module speaks this library's ABI.
 * Returns 0 and sets *@devp, or:
 *   -ENOENT  no such device node: is the module loaded (modprobe usnic_rel)?
 *   -ENOTTY  @path is not a usnic_rel device
 *   -EPROTO  the module's ABI version differs from the library's
 */
int urel_device_open(const char *path, struct urel_device **devp);

/* Close a device opened by urel_device_open(); NULL is ignored. */
void urel_device_close(struct urel_device *dev);

/* The ABI version the module reported at open. */
unsigned int urel_device_abi_version(const struct urel_device *dev);

/* The ABI version this library was built for. */
unsigned int urel_library_abi_version(void);

/* A message for a negative errno returned by this library (or its positive value). */
const char *urel_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* USNICREL_H */
