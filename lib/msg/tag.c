// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the OFI MTL's tag layouts. Values are checked against their
 * fields and refused when they do not fit: a silently truncated context or
 * source would match someone else's traffic.
 */
#include <errno.h>

#include "../internal.h"
#include "tag.h"

struct urel_tag_shape {
	unsigned int ctx_bits, src_bits, tag_bits; /* src_bits 0: not carried */
};

static const struct urel_tag_shape *urel_tag_shape(enum urel_tag_layout layout)
{
	static const struct urel_tag_shape shapes[] = {
		[UREL_TAG_1] = { 12, 18, 32 },
		[UREL_TAG_2] = { 24, 18, 20 },
		[UREL_TAG_FULL] = { 30, 0, 32 },
	};

	if (layout != UREL_TAG_1 && layout != UREL_TAG_2 && layout != UREL_TAG_FULL)
		return NULL;
	return &shapes[layout];
}

static uint64_t urel_field(unsigned int bits)
{
	return bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;
}

UREL_API int urel_tag_limits(enum urel_tag_layout layout, struct urel_tag_limits *lim)
{
	const struct urel_tag_shape *s = urel_tag_shape(layout);

	if (!s || !lim)
		return -EINVAL;
	lim->ctx_max = (uint32_t)urel_field(s->ctx_bits);
	lim->src_max = s->src_bits ? (int32_t)urel_field(s->src_bits) : INT32_MAX;
	/* The tag field's top bit is the library's. */
	lim->tag_max = (int32_t)urel_field(s->tag_bits - 1);
	return 0;
}

int urel_tag_pack_raw(enum urel_tag_layout layout, uint32_t ctx, int src, int tag, bool internal,
		      uint64_t *bits, uint64_t *ignore)
{
	const struct urel_tag_shape *s = urel_tag_shape(layout);
	uint64_t b = 0, ign = 0, tagf;
	unsigned int src_shift, ctx_shift;

	if (!s || !bits)
		return -EINVAL;
	if (src < 0 && src != UREL_ANY_SOURCE)
		return -EINVAL;
	if (tag < 0 && tag != UREL_ANY_TAG)
		return -EINVAL;
	if (ctx > urel_field(s->ctx_bits))
		return -ERANGE;
	src_shift = s->tag_bits;
	ctx_shift = s->tag_bits + s->src_bits;
	tagf = urel_field(s->tag_bits - 1);
	if (tag == UREL_ANY_TAG) {
		/* Any user tag: the reserved top bit stays significant (and zero). */
		ign |= tagf;
	} else {
		if ((uint64_t)tag > tagf)
			return -ERANGE;
		b |= (uint64_t)tag;
	}
	if (internal)
		b |= 1ULL << (s->tag_bits - 1);
	if (s->src_bits) {
		if (src == UREL_ANY_SOURCE) {
			ign |= urel_field(s->src_bits) << src_shift;
		} else {
			if ((uint64_t)src > urel_field(s->src_bits))
				return -ERANGE;
			b |= (uint64_t)src << src_shift;
		}
	}
	b |= (uint64_t)ctx << ctx_shift;
	*bits = b;
	if (ignore)
		*ignore = ign;
	return 0;
}

UREL_API int urel_tag_pack(enum urel_tag_layout layout, uint32_t ctx, int src, int tag,
			   uint64_t *bits, uint64_t *ignore)
{
	return urel_tag_pack_raw(layout, ctx, src, tag, false, bits, ignore);
}

UREL_API int urel_tag_unpack(enum urel_tag_layout layout, uint64_t bits, uint32_t *ctx, int *src,
			     int *tag)
{
	const struct urel_tag_shape *s = urel_tag_shape(layout);
	unsigned int used;

	if (!s)
		return -EINVAL;
	used = s->ctx_bits + s->src_bits + s->tag_bits;
	if (bits >> used || bits & (1ULL << (s->tag_bits - 1)))
		return -ERANGE;
	if (tag)
		*tag = (int)(bits & urel_field(s->tag_bits));
	if (src)
		*src = s->src_bits ? (int)(bits >> s->tag_bits & urel_field(s->src_bits))
				   : UREL_ANY_SOURCE;
	if (ctx)
		*ctx = (uint32_t)(bits >> (s->tag_bits + s->src_bits) & urel_field(s->ctx_bits));
	return 0;
}
