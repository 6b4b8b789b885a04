// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: message reassembly from reordered, repeated, overlapping and bad
 * fragments.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "reasm.h"
#include "../../include/uapi/usnic_rel_wire.h"

#define RT_IMM 0x0123456789abcdefULL

/* The message's byte at @off: every fragment is cut from the same data. */
static u8 rt_byte(u32 off)
{
	return (u8)(off * 31 + (off >> 8) + 7);
}

struct rt_ctx {
	u8 *src;
	u32 len;
};

static struct rt_ctx rt_source(struct kunit *test, u32 len)
{
	struct rt_ctx c = { .len = len };
	u32 i;

	c.src = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c.src);
	for (i = 0; i < len; i++)
		c.src[i] = rt_byte(i);
	return c;
}

static enum usnic_rel_reasm_result rt_add(struct usnic_rel_reasm *m,
					  const struct rt_ctx *c, u32 off,
					  u32 len)
{
	return usnic_rel_reasm_add(m, c->len, RT_IMM, off, c->src + off, len);
}

/* Take the finished message and compare it with the source. */
static void rt_check_done(struct kunit *test, struct usnic_rel_reasm *m,
			  const struct rt_ctx *c)
{
	u8 *buf;

	KUNIT_EXPECT_TRUE(test, usnic_rel_reasm_complete(m));
	KUNIT_EXPECT_EQ(test, m->imm, RT_IMM);
	buf = usnic_rel_reasm_take(m);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, memcmp(buf, c->src, c->len), 0);
	kvfree(buf);
	KUNIT_EXPECT_NULL(test, m->buf);
}

static void reasm_in_order(struct kunit *test)
{
	struct rt_ctx c = rt_source(test, 2500);
	struct usnic_rel_reasm m;

	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 7, c.len, RT_IMM,
						    GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 0, 1000), USNIC_REL_REASM_MORE);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 1000, 1000), USNIC_REL_REASM_MORE);
	KUNIT_EXPECT_EQ(test, m.nr, 1);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 2000, 500),
			USNIC_REL_REASM_COMPLETE);
	KUNIT_EXPECT_EQ(test, m.msg_id, 7);
	rt_check_done(test, &m, &c);
}

static void reasm_reordered_duplicated_overlapping(struct kunit *test)
{
	struct rt_ctx c = rt_source(test, 100);
	struct usnic_rel_reasm m;

	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 1, c.len, RT_IMM,
						    GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 50, 50), USNIC_REL_REASM_MORE);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 0, 30), USNIC_REL_REASM_MORE);
	KUNIT_EXPECT_EQ(test, m.nr, 2);
	/* Exact duplicates and sub-ranges add nothing. */
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 0, 30), USNIC_REL_REASM_DUPLICATE);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 60, 10),
			USNIC_REL_REASM_DUPLICATE);
	KUNIT_EXPECT_EQ(test, m.covered, 80);
	/* Overlapping both neighbours: bytes counted once, ranges merged. */
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 20, 40),
			USNIC_REL_REASM_COMPLETE);
	KUNIT_EXPECT_EQ(test, m.nr, 1);
	KUNIT_EXPECT_EQ(test, m.covered, 100);
	rt_check_done(test, &m, &c);
}

static void reasm_adjacent_ranges_merge(struct kunit *test)
{
	struct rt_ctx c = rt_source(test, 30);
	struct usnic_rel_reasm m;

	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 1, c.len, RT_IMM,
						    GFP_KERNEL), 0);
	rt_add(&m, &c, 20, 10);
	rt_add(&m, &c, 0, 10);
	KUNIT_EXPECT_EQ(test, m.nr, 2);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 10, 10),
			USNIC_REL_REASM_COMPLETE);
	KUNIT_EXPECT_EQ(test, m.nr, 1);
	rt_check_done(test, &m, &c);
}

static void reasm_rejects_disagreeing_fragments(struct kunit *test)
{
	struct rt_ctx c = rt_source(test, 64);
	struct usnic_rel_reasm m;

	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_start(&m, 1,
						    USNIC_REL_WIRE_MAX_MSG + 1,
						    RT_IMM, GFP_KERNEL),
			-EMSGSIZE);
	KUNIT_EXPECT_NULL(test, m.buf);

	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 1, c.len, RT_IMM,
						    GFP_KERNEL), 0);
	rt_add(&m, &c, 0, 16);
	/* Other total length, other immediate, outside, empty. */
	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, 65, RT_IMM, 16,
						  c.src, 16),
			USNIC_REL_REASM_BAD);
	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, 64, RT_IMM + 1, 16,
						  c.src, 16),
			USNIC_REL_REASM_BAD);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 60, 5), USNIC_REL_REASM_BAD);
	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, 64, RT_IMM, 65, c.src, 0),
			USNIC_REL_REASM_BAD);
	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, 64, RT_IMM, 0xfffffff0U,
						  c.src, 0x20),
			USNIC_REL_REASM_BAD);
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 16, 0), USNIC_REL_REASM_BAD);
	/* None of them changed anything. */
	KUNIT_EXPECT_EQ(test, m.covered, 16);
	KUNIT_EXPECT_EQ(test, m.nr, 1);
	/* Abort frees the buffer; kmemleak would report it otherwise. */
	usnic_rel_reasm_abort(&m);
	KUNIT_EXPECT_NULL(test, m.buf);
	usnic_rel_reasm_abort(&m);
}

static void reasm_empty_message(struct kunit *test)
{
	struct usnic_rel_reasm m;

	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 3, 0, RT_IMM,
						    GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, 0, RT_IMM, 0, NULL, 0),
			USNIC_REL_REASM_COMPLETE);
	KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, 0, RT_IMM, 1, NULL, 0),
			USNIC_REL_REASM_BAD);
	KUNIT_EXPECT_NULL(test, usnic_rel_reasm_take(&m));
}

static void reasm_bounds_scattering(struct kunit *test)
{
	struct rt_ctx c = rt_source(test, 200);
	struct usnic_rel_reasm m;
	u32 i;

	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 1, c.len, RT_IMM,
						    GFP_KERNEL), 0);
	/* Every other 4-byte piece, from the end: one range each. */
	for (i = USNIC_REL_REASM_MAX_RANGES; i > 0; i--)
		KUNIT_EXPECT_EQ(test, rt_add(&m, &c, (i - 1) * 8, 4),
				USNIC_REL_REASM_MORE);
	KUNIT_EXPECT_EQ(test, m.nr, USNIC_REL_REASM_MAX_RANGES);
	/* One more separate range is refused, and changes nothing. */
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 190, 4),
			USNIC_REL_REASM_TOO_SCATTERED);
	KUNIT_EXPECT_EQ(test, m.covered, 4 * USNIC_REL_REASM_MAX_RANGES);
	/* A fragment bridging three ranges shrinks the list. */
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 2, 20), USNIC_REL_REASM_MORE);
	KUNIT_EXPECT_EQ(test, m.nr, USNIC_REL_REASM_MAX_RANGES - 2);
	/* The rest in one piece. */
	KUNIT_EXPECT_EQ(test, rt_add(&m, &c, 0, c.len),
			USNIC_REL_REASM_COMPLETE);
	rt_check_done(test, &m, &c);
}

/* Random cuts, re-cut differently on "retransmission", in random order. */
static void reasm_random_cuts(struct kunit *test)
{
	struct rt_ctx c = rt_source(test, 4096);
	struct usnic_rel_reasm m;
	u32 rnd = 777, round, steps;

	for (round = 0; round < 20; round++) {
		enum usnic_rel_reasm_result r = USNIC_REL_REASM_MORE;

		KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, round, c.len,
							    RT_IMM, GFP_KERNEL),
				0);
		for (steps = 0; r != USNIC_REL_REASM_COMPLETE; steps++) {
			u32 off, len;

			rnd = rnd * 1103515245 + 12345;
			off = (rnd >> 4) % c.len;
			rnd = rnd * 1103515245 + 12345;
			len = 1 + (rnd >> 4) % min_t(u32, 700, c.len - off);
			r = rt_add(&m, &c, off, len);
			/* Too scattered is a refusal; the data comes again. */
			KUNIT_ASSERT_NE(test, r, USNIC_REL_REASM_BAD);
			KUNIT_ASSERT_LT(test, steps, 100000);
		}
		rt_check_done(test, &m, &c);
	}
}

static void reasm_largest_message_backwards(struct kunit *test)
{
	const u32 len = USNIC_REL_WIRE_MAX_MSG, frag = 8192;
	struct usnic_rel_reasm m;
	u8 *src, *buf;
	u32 off, i;

	src = kunit_kmalloc(test, frag, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	for (i = 0; i < frag; i++)
		src[i] = (u8)i;
	KUNIT_ASSERT_EQ(test, usnic_rel_reasm_start(&m, 1, len, RT_IMM,
						    GFP_KERNEL), 0);
	for (off = len; off; off -= frag)
		KUNIT_EXPECT_EQ(test, usnic_rel_reasm_add(&m, len, RT_IMM,
							  off - frag, src,
							  frag),
				off == frag ? USNIC_REL_REASM_COMPLETE :
					      USNIC_REL_REASM_MORE);
	buf = usnic_rel_reasm_take(&m);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, memcmp(buf + len - frag, src, frag), 0);
	kvfree(buf);
}

static struct kunit_case usnic_rel_reasm_cases[] = {
	KUNIT_CASE(reasm_in_order),
	KUNIT_CASE(reasm_reordered_duplicated_overlapping),
	KUNIT_CASE(reasm_adjacent_ranges_merge),
	KUNIT_CASE(reasm_rejects_disagreeing_fragments),
	KUNIT_CASE(reasm_empty_message),
	KUNIT_CASE(reasm_bounds_scattering),
	KUNIT_CASE(reasm_random_cuts),
	KUNIT_CASE(reasm_largest_message_backwards),
	{}
};

static struct kunit_suite usnic_rel_reasm_suite = {
	.name = "usnic_rel_reasm",
	.test_cases = usnic_rel_reasm_cases,
};

kunit_test_suite(usnic_rel_reasm_suite);
