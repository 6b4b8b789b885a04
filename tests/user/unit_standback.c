// SPDX-License-Identifier: MIT
/*
 * Host unit test of the progress threads' stand-back (lib/msg/standback.c):
 * UREL_PROGRESS_STANDBACK_US is parsed strictly; a thread stands back only
 * when the application's passes moved since its last look, first for a
 * short probe, then (still moving) for the whole interval, or while a
 * blocking call sleeps on the device (the whole interval), never when the
 * interval is 0; and an application pass counts, a progress thread's not.
 * A thread asleep on the device leaves it at the application's next pass
 * (the kick, written once per sleep), at an arrival, or at its timeout,
 * and leaves nothing armed or pending behind.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/internal.h"
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
	/* A blocking wait's start counts as a pass. */
	urel_msg_app_waits(&m);
	URT_CHECK_EQ(m.app_polls, 3);
}

struct sleeper {
	struct urel_msg *m;
	struct urel_device *dev;
	int ms, ret;
	uint64_t took_us;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct urel_msg_watcher wt;
	uint64_t t = now_us();

	s->ret = urel_msg_bg_sleep(s->m, &wt, s->dev, s->ms);
	s->took_us = now_us() - t;
	return NULL;
}

/* Until the sleeper armed the kick (it is about to sleep, or asleep). */
static void wait_armed(struct urel_msg *m)
{
	for (int i = 0; i < 5000 && !__atomic_load_n(&m->bg_armed, __ATOMIC_ACQUIRE); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	URT_CHECK(__atomic_load_n(&m->bg_armed, __ATOMIC_ACQUIRE));
	/* Let it reach poll(); a pass before that ends the sleep at once, as it should. */
	nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
}

/* Nothing armed, nobody counted asleep, no kick pending. */
static void check_quiet(struct urel_msg *m)
{
	uint64_t v;

	URT_CHECK_EQ(m->bg_armed, 0);
	URT_CHECK_EQ(m->bg_parked, 0);
	URT_CHECK(read(m->bg_fd, &v, sizeof(v)) < 0 && errno == EAGAIN);
}

static void check_kick(void)
{
	struct urel_msg m = { .attr.keepalive_ms = UINT32_MAX, .standback_us = 1000 };
	struct urel_device dev = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sleeper s = { .m = &m, .dev = &dev, .ms = 5000 };
	struct timespec ts;
	uint64_t one = 1;
	pthread_t th;
	int pfd[2];

	URT_CHECK_EQ(pipe(pfd), 0);
	dev.fd = pfd[0]; /* readable: an arrival */
	urel_msg_bg_init(&m);
	URT_CHECK(m.bg_fd >= 0);
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	m.last_ping_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	/* The application's pass wakes the sleeper long before its timeout. */
	URT_CHECK_EQ(pthread_create(&th, NULL, sleeper_main, &s), 0);
	wait_armed(&m);
	URT_CHECK_EQ(urel_msg_progress(&m), -EINVAL); /* no endpoint; the kick comes first */
	URT_CHECK_EQ(m.bg_armed, 0);
	/* Once per sleep: a second pass writes nothing more. */
	URT_CHECK_EQ(urel_msg_progress(&m), -EINVAL);
	pthread_join(th, NULL);
	URT_CHECK_EQ(s.ret, 1);
	URT_CHECK(s.took_us < 2000000);
	check_quiet(&m);
	/* So does the start of a blocking wait. */
	URT_CHECK_EQ(pthread_create(&th, NULL, sleeper_main, &s), 0);
	wait_armed(&m);
	urel_msg_app_waits(&m);
	pthread_join(th, NULL);
	URT_CHECK_EQ(s.ret, 1);
	URT_CHECK(s.took_us < 2000000);
	check_quiet(&m);
	/* An arrival wakes it too. */
	URT_CHECK_EQ(pthread_create(&th, NULL, sleeper_main, &s), 0);
	wait_armed(&m);
	URT_CHECK_EQ(write(pfd[1], &one, 1), 1);
	pthread_join(th, NULL);
	URT_CHECK_EQ(s.ret, 1);
	URT_CHECK(s.took_us < 2000000);
	check_quiet(&m);
	URT_CHECK_EQ(read(pfd[0], &one, 1), 1);
	/* Neither: the timeout, and nothing left armed for a pass to write. */
	s.ms = 30;
	URT_CHECK_EQ(pthread_create(&th, NULL, sleeper_main, &s), 0);
	pthread_join(th, NULL);
	URT_CHECK_EQ(s.ret, 0);
	URT_CHECK(s.took_us >= 30000);
	check_quiet(&m);
	/* Stand-back off: the sleep is the device's alone, never armed. */
	m.standback_us = 0;
	URT_CHECK_EQ(pthread_create(&th, NULL, sleeper_main, &s), 0);
	nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	URT_CHECK_EQ(m.bg_armed, 0);
	pthread_join(th, NULL);
	URT_CHECK_EQ(s.ret, 0);
	check_quiet(&m);
	urel_msg_bg_fini(&m);
	close(pfd[0]);
	close(pfd[1]);
}

int main(void)
{
	check_parse();
	check_stand_back();
	check_counting();
	check_kick();
	return urt_done("unit_standback");
}
