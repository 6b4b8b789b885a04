// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the connection timers' decisions. A tail-loss probe that expires
 * while the endpoint transmits waits once per flight, never twice.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "conn.h"

static void timers_probe_goes_when_idle(struct kunit *test)
{
	struct usnic_rel_conn *conn = kunit_kzalloc(test, sizeof(*conn),
						    GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, conn);
	KUNIT_EXPECT_FALSE(test, usnic_rel_probe_wait(conn, false));
	/* Not sending now: no wait spent, the next expiry may still wait. */
	KUNIT_EXPECT_FALSE(test, conn->probe_waited);
}

static void timers_probe_waits_once_per_flight(struct kunit *test)
{
	struct usnic_rel_conn *conn = kunit_kzalloc(test, sizeof(*conn),
						    GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, conn);
	KUNIT_EXPECT_TRUE(test, usnic_rel_probe_wait(conn, true));
	/* Still transmitting at the next expiry: the probe goes. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_probe_wait(conn, true));
	KUNIT_EXPECT_FALSE(test, usnic_rel_probe_wait(conn, false));
	/* Progress (ack.c) starts a new flight, which may wait again. */
	conn->probe_waited = false;
	KUNIT_EXPECT_TRUE(test, usnic_rel_probe_wait(conn, true));
}

static struct kunit_case usnic_rel_timers_cases[] = {
	KUNIT_CASE(timers_probe_goes_when_idle),
	KUNIT_CASE(timers_probe_waits_once_per_flight),
	{}
};

static struct kunit_suite usnic_rel_timers_suite = {
	.name = "usnic_rel_timers",
	.test_cases = usnic_rel_timers_cases,
};

kunit_test_suite(usnic_rel_timers_suite);
