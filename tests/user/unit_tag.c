// SPDX-License-Identifier: MIT
/*
 * Host unit test of the MPI tag layouts (lib/msg/tag.c): fields land where
 * the OFI MTL puts them, round trips at every field's boundaries, the
 * published maxima are the real ones, out-of-range values are refused
 * (never truncated), ANY_SOURCE/ANY_TAG ignore exactly their fields, and
 * ANY_TAG never accepts the library's internal tags.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include <usnicrel_msg.h>

#include "../../lib/msg/match.h"
#include "../../lib/msg/tag.h"

#include "urt.h"

static void check_positions(void)
{
	uint64_t bits, ign;

	URT_CHECK_EQ(urel_tag_pack(UREL_TAG_1, 0xabc, 0x2345, 0x12345678, &bits, &ign), 0);
	URT_CHECK(bits == (0xabcULL << 50 | 0x2345ULL << 32 | 0x12345678ULL));
	URT_CHECK_EQ(ign, 0);
	URT_CHECK_EQ(urel_tag_pack(UREL_TAG_2, 0xabcdef, 0x2345, 0x1234, &bits, &ign), 0);
	URT_CHECK(bits == (0xabcdefULL << 38 | 0x2345ULL << 20 | 0x1234ULL));
	URT_CHECK_EQ(urel_tag_pack(UREL_TAG_FULL, 0x2bcdef01, 77, 0x7fffffff, &bits, &ign), 0);
	URT_CHECK(bits == (0x2bcdef01ULL << 32 | 0x7fffffffULL));
	/* The two protocol bits stay clear in every layout. */
	URT_CHECK_EQ(urel_tag_pack(UREL_TAG_2, 0xffffff, 0x3ffff, 0x7ffff, &bits, NULL), 0);
	URT_CHECK_EQ(bits >> 62, 0);
}

static void check_limits(void)
{
	static const enum urel_tag_layout layouts[] = { UREL_TAG_1, UREL_TAG_2, UREL_TAG_FULL };
	struct urel_tag_limits lim;
	uint64_t bits, ign;

	URT_CHECK_EQ(urel_tag_limits(UREL_TAG_1, &lim), 0);
	URT_CHECK_EQ(lim.ctx_max, 4095);
	URT_CHECK_EQ(lim.src_max, (1 << 18) - 1);
	URT_CHECK_EQ(lim.tag_max, INT32_MAX);
	URT_CHECK_EQ(urel_tag_limits(UREL_TAG_2, &lim), 0);
	URT_CHECK_EQ(lim.ctx_max, (1 << 24) - 1);
	URT_CHECK_EQ(lim.tag_max, (1 << 19) - 1);
	URT_CHECK_EQ(urel_tag_limits(UREL_TAG_FULL, &lim), 0);
	URT_CHECK_EQ(lim.ctx_max, (1U << 30) - 1);
	URT_CHECK_EQ(lim.src_max, INT32_MAX);
	URT_CHECK_EQ(urel_tag_limits((enum urel_tag_layout)0, &lim), -EINVAL);
	URT_CHECK_EQ(urel_tag_limits((enum urel_tag_layout)4, &lim), -EINVAL);

	for (unsigned int i = 0; i < 3; i++) {
		enum urel_tag_layout l = layouts[i];
		uint32_t ctx;
		int src, tag;

		URT_CHECK_EQ(urel_tag_limits(l, &lim), 0);
		/* The maxima round-trip, one past each is refused. */
		URT_CHECK_EQ(urel_tag_pack(l, lim.ctx_max, l == UREL_TAG_FULL ? 5 : lim.src_max,
					   lim.tag_max, &bits, &ign),
			     0);
		URT_CHECK_EQ(urel_tag_unpack(l, bits, &ctx, &src, &tag), 0);
		URT_CHECK_EQ(ctx, lim.ctx_max);
		URT_CHECK_EQ(src, l == UREL_TAG_FULL ? UREL_ANY_SOURCE : lim.src_max);
		URT_CHECK_EQ(tag, lim.tag_max);
		URT_CHECK_EQ(urel_tag_pack(l, lim.ctx_max + 1, 0, 0, &bits, NULL), -ERANGE);
		if (lim.tag_max < INT32_MAX)
			URT_CHECK_EQ(urel_tag_pack(l, 0, 0, lim.tag_max + 1, &bits, NULL), -ERANGE);
		if (l != UREL_TAG_FULL)
			URT_CHECK_EQ(urel_tag_pack(l, 0, lim.src_max + 1, 0, &bits, NULL), -ERANGE);
		/* Zeros round-trip; negative values other than the wildcards are refused. */
		URT_CHECK_EQ(urel_tag_pack(l, 0, 0, 0, &bits, NULL), 0);
		URT_CHECK_EQ(urel_tag_unpack(l, bits, &ctx, &src, &tag), 0);
		URT_CHECK_EQ(ctx + (uint32_t)tag, 0);
		URT_CHECK_EQ(urel_tag_pack(l, 0, -2, 0, &bits, NULL), -EINVAL);
		URT_CHECK_EQ(urel_tag_pack(l, 0, 0, -2, &bits, NULL), -EINVAL);
		URT_CHECK_EQ(urel_tag_pack(l, 0, 0, INT_MIN, &bits, NULL), -EINVAL);
		/* Bits outside the layout, or the reserved tag bit, do not unpack as user tags. */
		URT_CHECK_EQ(urel_tag_unpack(l, 1ULL << 63, &ctx, &src, &tag), -ERANGE);
		URT_CHECK_EQ(urel_tag_unpack(l, (uint64_t)lim.tag_max + 1, &ctx, &src, &tag),
			     -ERANGE);
	}
	URT_CHECK_EQ(urel_tag_pack((enum urel_tag_layout)9, 0, 0, 0, &bits, NULL), -EINVAL);
	URT_CHECK_EQ(urel_tag_pack(UREL_TAG_1, 0, 0, 0, NULL, NULL), -EINVAL);
}

/* Does a receive (ctx, src, tag) accept a send (ctx, src, tag) under layout @l? */
static int accepts(enum urel_tag_layout l, uint32_t rctx, int rsrc, int rtag, uint32_t sctx,
		   int ssrc, int stag, bool internal)
{
	uint64_t rb, ri, sb;

	if (urel_tag_pack(l, rctx, rsrc, rtag, &rb, &ri) ||
	    urel_tag_pack_raw(l, sctx, ssrc, stag, internal, &sb, NULL))
		return -1;
	return urel_match_accepts(UREL_MATCH_ANY_SRC, rb & ~ri, ri, 0, sb);
}

static void check_wildcards(void)
{
	static const enum urel_tag_layout layouts[] = { UREL_TAG_1, UREL_TAG_2 };

	for (unsigned int i = 0; i < 2; i++) {
		enum urel_tag_layout l = layouts[i];

		URT_CHECK_EQ(accepts(l, 5, 3, 9, 5, 3, 9, false), 1);
		URT_CHECK_EQ(accepts(l, 5, 3, 9, 5, 3, 8, false), 0);
		URT_CHECK_EQ(accepts(l, 5, 3, 9, 5, 4, 9, false), 0);
		URT_CHECK_EQ(accepts(l, 5, 3, 9, 6, 3, 9, false), 0);
		URT_CHECK_EQ(accepts(l, 5, UREL_ANY_SOURCE, 9, 5, 1000, 9, false), 1);
		URT_CHECK_EQ(accepts(l, 5, UREL_ANY_SOURCE, 9, 5, 1000, 10, false), 0);
		URT_CHECK_EQ(accepts(l, 5, 3, UREL_ANY_TAG, 5, 3, 12345, false), 1);
		URT_CHECK_EQ(accepts(l, 5, 3, UREL_ANY_TAG, 5, 4, 12345, false), 0);
		URT_CHECK_EQ(accepts(l, 5, UREL_ANY_SOURCE, UREL_ANY_TAG, 5, 7, 7, false), 1);
		/* Never another context, never an internal tag. */
		URT_CHECK_EQ(accepts(l, 5, UREL_ANY_SOURCE, UREL_ANY_TAG, 4, 7, 7, false), 0);
		URT_CHECK_EQ(accepts(l, 5, UREL_ANY_SOURCE, UREL_ANY_TAG, 5, 7, 7, true), 0);
		URT_CHECK_EQ(accepts(l, 5, 7, UREL_ANY_TAG, 5, 7, 0, true), 0);
	}
	URT_CHECK_EQ(accepts(UREL_TAG_FULL, 5, UREL_ANY_SOURCE, UREL_ANY_TAG, 5, 7, 7, false), 1);
	URT_CHECK_EQ(accepts(UREL_TAG_FULL, 5, 1, UREL_ANY_TAG, 5, 7, 7, true), 0);
}

int main(void)
{
	check_positions();
	check_limits();
	check_wildcards();
	return urt_done("unit_tag");
}
