// SPDX-License-Identifier: MIT
/*
 * Host unit test of the progress threads' stand-back (lib/msg/standback.c):
 * UREL_PROGRESS_STANDBACK_US is parsed strictly; a thread stands back only
 * when the application's passes moved since its last look, first for a
 * short probe, then (still moving) for the whole interval, or while a
 * blocking call sleeps on the device (the whole interval), never when the
 * interval is 0; and an application pass counts, a progress thread's not.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "../../lib/msg/msg.h"

#include "urt.h"

static int parse(const char *value, uint32_t *us)
{
	if (value)
		setenv("UREL_PROGRESS_STANDBACK_US", value, 1);
	else
		unsetenv("UREL_PROGRESS_STANDBACK_US");
	return urel_msg_standback_us(us);
}

static void check_parse(void)
{
	uint32_t us = 7;

	URT_CHECK_EQ(parse(NULL, &us), 0);
	URT_CHECK_EQ(us, 1000);
	URT_CHECK_EQ(parse("0", &us), 0);
	URT_CHECK_EQ(us, 0);
	URT_CHECK_EQ(parse("250", &us), 0);
	URT_CHECK_EQ(us, 250);
	URT_CHECK_EQ(parse("1000000", &us), 0);
	URT_CHECK_EQ(us, 1000000);
	URT_CHECK_EQ(parse("1000001", &us), -EINVAL);
	URT_CHECK_EQ(parse("", &us), -EINVAL);
	URT_CHECK_EQ(parse("-1", &us), -EINVAL);
	URT_CHECK_EQ(parse("12ms", &us), -EINVAL);
	URT_CHECK_EQ(parse("99999999999999999999", &us), -EINVAL);
	unsetenv("UREL_PROGRESS_STANDBACK_US");
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The application made one more progress pass. */
static void app_pass(struct urel_msg *m)
{
	__atomic_fetch_add(&m->app_polls, 1, __ATOMIC_RELAXED);
}

static void check_stand_back(void)
{
	struct urel_msg m = { .standback_us = 3000 };
	struct urel_msg_watcher wt;
	uint64_t t;

	urel_msg_bg_look(&m, &wt);
	URT_CHECK(!wt.steady);
	/* The application is not polling: the thread makes its pass. */
	URT_CHECK(!urel_msg_bg_stand_back(&m, &wt, false));
	/* It polled since: a short probe first (at least 50 us asleep)... */
	app_pass(&m);
	t = now_us();
	URT_CHECK(urel_msg_bg_stand_back(&m, &wt, false));
	URT_CHECK(now_us() - t >= 50);
	URT_CHECK(wt.steady);
	/* ...then, still polling, the whole interval. */
	app_pass(&m);
	t = now_us();
	URT_CHECK(urel_msg_bg_stand_back(&m, &wt, false));
	URT_CHECK(now_us() - t >= 3000);
	/* It stopped: the thread serves again, and the next stand-back probes. */
	URT_CHECK(!urel_msg_bg_stand_back(&m, &wt, false));
	URT_CHECK(!wt.steady);
	/* A look before the device sleep takes in the passes made until then. */
	app_pass(&m);
	urel_msg_bg_look(&m, &wt);
	URT_CHECK(!urel_msg_bg_stand_back(&m, &wt, false));
	/* A blocking call asleep on the device: the whole interval, moving or not. */
	t = now_us();
	URT_CHECK(urel_msg_bg_stand_back(&m, &wt, true));
	URT_CHECK(now_us() - t >= 3000);
	m.waker.sleepers = 1;
	URT_CHECK(urel_msg_bg_stand_back(&m, &wt, false));
	m.waker.sleepers = 0;
	URT_CHECK(!urel_msg_bg_stand_back(&m, &wt, false));
	/* Interval 0: never. */
	m.standback_us = 0;
	app_pass(&m);
	URT_CHECK(!urel_msg_bg_stand_back(&m, &wt, false));
}

/* An application's pass counts, a progress thread's not (no endpoint: both fail alike). */
static void check_counting(void)
{
	struct urel_msg m = { .attr.keepalive_ms = UINT32_MAX };
	struct timespec ts;

	/* No keepalive due: the pass stops after the core's (failing) progress. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	m.last_ping_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	URT_CHECK_EQ(urel_msg_progress_bg(&m), -EINVAL);
	URT_CHECK_EQ(m.app_polls, 0);
	URT_CHECK_EQ(urel_msg_progress(&m), -EINVAL);
	URT_CHECK_EQ(m.app_polls, 1);
	URT_CHECK_EQ(urel_msg_progress_one(&m, true), -EINVAL);
	URT_CHECK_EQ(m.app_polls, 2);
}

int main(void)
{
	check_parse();
	check_stand_back();
	check_counting();
	return urt_done("unit_standback");
}
