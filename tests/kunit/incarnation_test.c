// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: incarnation checks for new, known, restarted and dead peers.
 */
#include <kunit/test.h>

#include "incarnation.h"

struct ic_case {
	u32 known, prev, src, dst;
	enum usnic_rel_inc_verdict want;
};

#define US 0xa0a0a0a0U
#define OLD_US 0x0b0b0b0bU
#define PEER 0x11111111U
#define PEER_NEW 0x22222222U

static const struct ic_case ic_cases[] = {
	{ 0, 0, PEER, 0, USNIC_REL_INC_NEW_PEER },	/* first contact */
	{ 0, 0, PEER, US, USNIC_REL_INC_NEW_PEER },	/* it knew us first */
	{ 0, 0, PEER, OLD_US, USNIC_REL_INC_STALE_DST },
	{ PEER, 0, PEER, US, USNIC_REL_INC_OK },
	{ PEER, 0, PEER, 0, USNIC_REL_INC_OK },		/* not heard us yet */
	{ PEER, 0, PEER, OLD_US, USNIC_REL_INC_STALE_DST },
	{ PEER, 0, PEER_NEW, US, USNIC_REL_INC_RESTARTED },
	{ PEER, 0, PEER_NEW, 0, USNIC_REL_INC_RESTARTED },
	{ PEER, 0, PEER_NEW, OLD_US, USNIC_REL_INC_STALE_DST },
	/* After the restart, the old self's late packets are dropped. */
	{ PEER_NEW, PEER, PEER, US, USNIC_REL_INC_STALE_SRC },
	{ PEER_NEW, PEER, PEER_NEW, US, USNIC_REL_INC_OK },
	{ PEER_NEW, PEER, 0x33333333U, US, USNIC_REL_INC_RESTARTED },
};

static void incarnation_table(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ic_cases); i++) {
		const struct ic_case *c = &ic_cases[i];

		KUNIT_EXPECT_EQ_MSG(test,
				    usnic_rel_incarnation_check(US, c->known,
								c->prev, c->src,
								c->dst),
				    c->want, "case %u", i);
	}
}

static struct kunit_case usnic_rel_incarnation_cases[] = {
	KUNIT_CASE(incarnation_table),
	{}
};

static struct kunit_suite usnic_rel_incarnation_suite = {
	.name = "usnic_rel_incarnation",
	.test_cases = usnic_rel_incarnation_cases,
};

kunit_test_suite(usnic_rel_incarnation_suite);
