/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: tag layouts, the library's side (internal tags).
 */
#ifndef UREL_MSG_TAG_H
#define UREL_MSG_TAG_H

#include <stdbool.h>
#include <stdint.h>

#include <usnicrel_msg.h>

/* urel_tag_pack(); @internal sets the tag field's reserved top bit (the library's traffic). */
int urel_tag_pack_raw(enum urel_tag_layout layout, uint32_t ctx, int src, int tag, bool internal,
		      uint64_t *bits, uint64_t *ignore);

#endif /* UREL_MSG_TAG_H */
