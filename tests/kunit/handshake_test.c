// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the handshake's decisions: which packets may use a connection,
 * which HELLOs verify their sender, and when a challenge may be sent.
 */
#include <kunit/test.h>

#include "handshake.h"

#define US 0xa0a0a0a0U
#define OLD_US 0x0b0b0b0bU
#define PEER 0x11111111U
#define PEER_NEW 0x22222222U
#define COOKIE 0x0123456789abcdefULL

struct hs_case {
	u32 remote, prev, src, dst;
	enum usnic_rel_hs_verdict want;
};

static const struct hs_case hs_cases[] = {
	/* Nothing is paired: nobody may use the connection. */
	{ 0, 0, PEER, 0, USNIC_REL_HS_UNVERIFIED },
	{ 0, 0, PEER, US, USNIC_REL_HS_UNVERIFIED },
	{ 0, 0, PEER, OLD_US, USNIC_REL_HS_UNVERIFIED },
	{ PEER, 0, PEER, US, USNIC_REL_HS_OK },
	/* The paired peer must name us: 0 or an old epoch of ours is stale. */
	{ PEER, 0, PEER, 0, USNIC_REL_HS_STALE_DST },
	{ PEER, 0, PEER, OLD_US, USNIC_REL_HS_STALE_DST },
	/* A new incarnation claims a restart: no reset, a challenge. */
	{ PEER, 0, PEER_NEW, US, USNIC_REL_HS_UNVERIFIED },
	{ PEER, 0, PEER_NEW, 0, USNIC_REL_HS_UNVERIFIED },
	/* After a verified restart, the old self's late packets are dropped. */
	{ PEER_NEW, PEER, PEER, US, USNIC_REL_HS_STALE_SRC },
	{ PEER_NEW, PEER, PEER_NEW, US, USNIC_REL_HS_OK },
	{ PEER_NEW, PEER, 0x33333333U, US, USNIC_REL_HS_UNVERIFIED },
};

static void hs_classify_table(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hs_cases); i++) {
		const struct hs_case *c = &hs_cases[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    usnic_rel_hs_classify(US, c->remote, c->prev,
							  c->src, c->dst),
				    c->want, "case %u", i);
	}
}

struct hello_case {
	u32 remote, prev, src, dst;
	u64 echo;
	enum usnic_rel_hello_verdict want;
};

static const struct hello_case hello_cases[] = {
	/* First contact: no echo yet. */
	{ 0, 0, PEER, 0, 0, USNIC_REL_HELLO_UNVERIFIED },
	/* Echo right but addressed to another epoch of ours. */
	{ 0, 0, PEER, OLD_US, COOKIE, USNIC_REL_HELLO_UNVERIFIED },
	{ 0, 0, PEER, 0, COOKIE, USNIC_REL_HELLO_UNVERIFIED },
	/* A guessed echo one bit off. */
	{ 0, 0, PEER, US, COOKIE ^ 1, USNIC_REL_HELLO_UNVERIFIED },
	{ 0, 0, PEER, US, COOKIE, USNIC_REL_HELLO_PAIR },
	{ PEER, 0, PEER, US, COOKIE, USNIC_REL_HELLO_CURRENT },
	/* A forged restart from a known peer's address. */
	{ PEER, 0, PEER_NEW, US, 0, USNIC_REL_HELLO_UNVERIFIED },
	{ PEER, 0, PEER_NEW, 0, COOKIE ^ 0x100, USNIC_REL_HELLO_UNVERIFIED },
	/* A real restart that echoed our cookie. */
	{ PEER, 0, PEER_NEW, US, COOKIE, USNIC_REL_HELLO_PAIR },
	/* The old self, even with a valid echo, never pairs back. */
	{ PEER_NEW, PEER, PEER, US, COOKIE, USNIC_REL_HELLO_STALE },
	{ PEER_NEW, PEER, PEER, US, 0, USNIC_REL_HELLO_STALE },
};

static void hello_classify_table(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hello_cases); i++) {
		const struct hello_case *c = &hello_cases[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    usnic_rel_hello_classify(US, COOKIE, c->remote,
							     c->prev, c->src,
							     c->dst, c->echo),
				    c->want, "case %u", i);
	}
}

/* A connection without a cookie (never happens) verifies nothing. */
static void hello_zero_cookie_never_verifies(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, usnic_rel_hello_classify(US, 0, 0, 0, PEER, US, 0),
			USNIC_REL_HELLO_UNVERIFIED);
}

static void hs_answer_limits(struct kunit *test)
{
	unsigned long now = 1000;

	/* Never more bytes out than in. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_hs_may_answer(40, 64, now, now));
	KUNIT_EXPECT_FALSE(test, usnic_rel_hs_may_answer(63, 64, now, now));
	KUNIT_EXPECT_TRUE(test, usnic_rel_hs_may_answer(64, 64, now, now));
	KUNIT_EXPECT_TRUE(test, usnic_rel_hs_may_answer(1500, 64, now, now));
	/* One per interval. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_hs_may_answer(64, 64, now, now + 1));
	KUNIT_EXPECT_TRUE(test, usnic_rel_hs_may_answer(64, 64, now + 1, now + 1));
	/* Across a jiffies wrap. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_hs_may_answer(64, 64, ULONG_MAX, 2));
	KUNIT_EXPECT_TRUE(test, usnic_rel_hs_may_answer(64, 64, 3, ULONG_MAX));
}

static struct kunit_case usnic_rel_handshake_cases[] = {
	KUNIT_CASE(hs_classify_table),
	KUNIT_CASE(hello_classify_table),
	KUNIT_CASE(hello_zero_cookie_never_verifies),
	KUNIT_CASE(hs_answer_limits),
	{}
};

static struct kunit_suite usnic_rel_handshake_suite = {
	.name = "usnic_rel_handshake",
	.test_cases = usnic_rel_handshake_cases,
};

kunit_test_suite(usnic_rel_handshake_suite);
