/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: a buddy allocator for an endpoint's send staging area. Sends
 * complete out of posting order (across peers and channels), so space must
 * be reusable in any order; a buddy allocator frees in O(log n) and merges
 * neighbours back, unlike a ring that a single slow send would block.
 */
#ifndef USNICREL_STAGING_H
#define USNICREL_STAGING_H

#include <stddef.h>
#include <stdint.h>

/* Blocks are at least a cache line; at most 64 Ki blocks keep metadata small. */
#define UREL_STAGING_MIN_SHIFT 6
#define UREL_STAGING_MAX_UNITS (1U << 16)
#define UREL_STAGING_MAX_ORDER 31

struct urel_staging {
	uint32_t unit_shift; /* log2 of the smallest block */
	uint32_t nunits;
	uint32_t max_order;
	size_t free_bytes;
	uint32_t free_head[UREL_STAGING_MAX_ORDER + 1];
	uint32_t *next, *prev; /* free lists, per unit heading a free block */
	uint8_t *state; /* per unit heading a block: order | UREL_STAGING_FREE */
};

int urel_staging_init(struct urel_staging *s, size_t size);
void urel_staging_fini(struct urel_staging *s);

/* Returns 0 and the block's offset, -ENOBUFS when no block fits now, -EMSGSIZE never. */
int urel_staging_alloc(struct urel_staging *s, size_t len, uint32_t *off);

/* Free the block at @off returned by urel_staging_alloc(). */
void urel_staging_free(struct urel_staging *s, uint32_t off);

/* Bytes of the largest block that can ever be allocated. */
size_t urel_staging_max_alloc(const struct urel_staging *s);

#endif /* USNICREL_STAGING_H */
