// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the staging area's buddy allocator (see staging.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "staging.h"

#define UREL_STAGING_FREE 0x80
#define UREL_STAGING_NIL UINT32_MAX

static void urel_staging_push(struct urel_staging *s, uint32_t unit, uint32_t order)
{
	uint32_t head = s->free_head[order];

	s->state[unit] = (uint8_t)(order | UREL_STAGING_FREE);
	s->prev[unit] = UREL_STAGING_NIL;
	s->next[unit] = head;
	if (head != UREL_STAGING_NIL)
		s->prev[head] = unit;
	s->free_head[order] = unit;
}

static void urel_staging_unlink(struct urel_staging *s, uint32_t unit, uint32_t order)
{
	uint32_t next = s->next[unit], prev = s->prev[unit];

	if (prev != UREL_STAGING_NIL)
		s->next[prev] = next;
	else
		s->free_head[order] = next;
	if (next != UREL_STAGING_NIL)
		s->prev[next] = prev;
	s->state[unit] = (uint8_t)order;
}

int urel_staging_init(struct urel_staging *s, size_t size)
{
	uint32_t unit = 0, order;

	memset(s, 0, sizeof(*s));
	s->unit_shift = UREL_STAGING_MIN_SHIFT;
	while ((size >> s->unit_shift) > UREL_STAGING_MAX_UNITS)
		s->unit_shift++;
	s->nunits = (uint32_t)(size >> s->unit_shift);
	if (!s->nunits)
		return -EINVAL;
	s->next = calloc(s->nunits, sizeof(*s->next));
	s->prev = calloc(s->nunits, sizeof(*s->prev));
	s->state = calloc(s->nunits, sizeof(*s->state));
	if (!s->next || !s->prev || !s->state) {
		urel_staging_fini(s);
		return -ENOMEM;
	}
	for (order = 0; order <= UREL_STAGING_MAX_ORDER; order++)
		s->free_head[order] = UREL_STAGING_NIL;
	while ((2ULL << s->max_order) <= s->nunits)
		s->max_order++;
	/* Carve the area into the largest naturally aligned blocks that fit. */
	while (unit < s->nunits) {
		order = s->max_order;
		while ((unit & ((1U << order) - 1)) || unit + (1U << order) > s->nunits)
			order--;
		urel_staging_push(s, unit, order);
		unit += 1U << order;
	}
	s->free_bytes = (size_t)s->nunits << s->unit_shift;
	return 0;
}

void urel_staging_fini(struct urel_staging *s)
{
	free(s->next);
	free(s->prev);
	free(s->state);
	s->next = s->prev = NULL;
	s->state = NULL;
}

size_t urel_staging_max_alloc(const struct urel_staging *s)
{
	return s->nunits ? (size_t)1 << (s->max_order + s->unit_shift) : 0;
}

int urel_staging_alloc(struct urel_staging *s, size_t len, uint32_t *off)
{
	uint32_t want = 0, order, unit;

	if (!len || len > urel_staging_max_alloc(s))
		return -EMSGSIZE;
	while (((size_t)1 << (want + s->unit_shift)) < len)
		want++;
	for (order = want; order <= s->max_order; order++) {
		if (s->free_head[order] != UREL_STAGING_NIL)
			break;
	}
	if (order > s->max_order)
		return -ENOBUFS;
	unit = s->free_head[order];
	urel_staging_unlink(s, unit, order);
	/* Split, returning upper halves to the free lists. */
	while (order > want) {
		order--;
		urel_staging_push(s, unit + (1U << order), order);
	}
	s->state[unit] = (uint8_t)want;
	s->free_bytes -= (size_t)1 << (want + s->unit_shift);
	*off = unit << s->unit_shift;
	return 0;
}

void urel_staging_free(struct urel_staging *s, uint32_t off)
{
	uint32_t unit = off >> s->unit_shift;
	uint32_t order = s->state[unit];

	s->free_bytes += (size_t)1 << (order + s->unit_shift);
	/* Merge with the buddy while it is free and whole. */
	while (order < s->max_order) {
		uint32_t buddy = unit ^ (1U << order);

		if (buddy + (1U << order) > s->nunits ||
		    s->state[buddy] != (uint8_t)(order | UREL_STAGING_FREE))
			break;
		urel_staging_unlink(s, buddy, order);
		if (buddy < unit)
			unit = buddy;
		order++;
	}
	urel_staging_push(s, unit, order);
}
