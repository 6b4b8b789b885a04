/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: declarations private to the library.
 */
#ifndef USNICREL_INTERNAL_H
#define USNICREL_INTERNAL_H

/* Marks the symbols the library exports; everything else stays hidden. */
#define UREL_API __attribute__((visibility("default")))

struct urel_device {
	int fd;
	unsigned int abi_version;
};

#endif /* USNICREL_INTERNAL_H */
