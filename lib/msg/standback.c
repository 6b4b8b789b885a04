// SPDX-License-Identifier: MIT
/*
 * libusnicrel: a progress thread stands back while the application makes
 * progress itself (standback.h). Woken by each arrival, the thread would
 * contend with a thread that polls anyway (an origin in a flush) for the
 * locks and, with as many threads as CPUs, for the CPU. The application's
 * passes are counted (urel_msg_progress_one()); while the count moves, or
 * a blocking call sleeps on the device (which wakes it on an arrival as it
 * would wake the thread), the thread sleeps a while instead of a pass,
 * without touching the device, then looks again. Once the application
 * computes, the thread serves arrivals again as they come. A thread that
 * went to sleep on the device before the application started polling
 * would still be woken by every arrival the application polls for: its
 * sleep also watches an eventfd, which the application's first pass
 * afterwards writes (once per sleep), and the thread stands back from then.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../internal.h"
#include "msg.h"

/*
 * The sleep between two looks (UREL_PROGRESS_STANDBACK_US; 0: never stand
 * back): the longest an arrival waits for the thread after the application
 * stopped calling the library, beyond the usual wake-up.
 */
#define UREL_MSG_STANDBACK_US_DEFAULT 1000
#define UREL_MSG_STANDBACK_US_MAX 1000000
/*
 * The first stand-back after a sleep on the device is this short: the
 * passes seen may have been the application's last before it went to
 * compute, and then the thread serves at once.
 */
#define UREL_MSG_STANDBACK_PROBE_US 50

int urel_msg_standback_us(uint32_t *us)
{
	const char *s = getenv("UREL_PROGRESS_STANDBACK_US");
	unsigned long v;
	char *end;

	*us = UREL_MSG_STANDBACK_US_DEFAULT;
	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (!*s || *s == '-' || errno || *end || v > UREL_MSG_STANDBACK_US_MAX)
		return -EINVAL;
	*us = (uint32_t)v;
	return 0;
}

void urel_msg_bg_init(struct urel_msg *m)
{
	m->bg_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->bg_armed = 0;
	m->bg_parked = 0;
}

void urel_msg_bg_fini(struct urel_msg *m)
{
	if (m->bg_fd >= 0)
		close(m->bg_fd);
	m->bg_fd = -1;
}

void urel_msg_bg_kick(struct urel_msg *m)
{
	uint64_t one = 1;

	/* Only the pass that disarms writes: a sleep is woken once. */
	if (__atomic_exchange_n(&m->bg_armed, 0, __ATOMIC_RELAXED) &&
	    write(m->bg_fd, &one, sizeof(one)) < 0)
		return; /* full (never drained?): it is readable anyway */
}

void urel_msg_app_waits(struct urel_msg *m)
{
	urel_msg_count_pass(m);
}

int urel_msg_bg_sleep(struct urel_msg *m, struct urel_msg_watcher *wt, struct urel_device *dev,
		      int ms)
{
	uint64_t drain;
	int n;

	urel_msg_bg_look(m, wt);
	if (m->bg_fd < 0 || !m->standback_us)
		return urel_device_wait(dev, ms);
	__atomic_add_fetch(&m->bg_parked, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&m->bg_armed, 1, __ATOMIC_SEQ_CST);
	/*
	 * A pass between the look and the arming did not see it armed. The
	 * pass's side has no fence (a relaxed load per pass), so one may still
	 * slip by: then this sleep ends at the next arrival, as without the kick.
	 */
	if (__atomic_load_n(&m->app_polls, __ATOMIC_SEQ_CST) != wt->seen)
		n = 1;
	else
		n = urel_device_wait_fd(dev, m->bg_fd, ms);
	/*
	 * The last sleeper disarms and drains; a kick that lands later (its
	 * pass disarmed before the drain and wrote after it) only ends the
	 * next sleep early once, and that sleep's end drains it.
	 */
	if (__atomic_sub_fetch(&m->bg_parked, 1, __ATOMIC_RELAXED) == 0) {
		__atomic_store_n(&m->bg_armed, 0, __ATOMIC_RELAXED);
		if (read(m->bg_fd, &drain, sizeof(drain)) < 0)
			return n; /* -EAGAIN: nobody kicked */
	}
	return n;
}

void urel_msg_bg_look(struct urel_msg *m, struct urel_msg_watcher *wt)
{
	wt->seen = __atomic_load_n(&m->app_polls, __ATOMIC_RELAXED);
	wt->steady = false;
}

bool urel_msg_bg_stand_back(struct urel_msg *m, struct urel_msg_watcher *wt, bool blocked)
{
	uint64_t polls = __atomic_load_n(&m->app_polls, __ATOMIC_RELAXED);
	uint32_t us = m->standback_us;
	struct timespec ts;

	blocked = blocked || urel_waker_busy(&m->waker);
	if (!us || (polls == wt->seen && !blocked)) {
		wt->steady = false;
		return false;
	}
	wt->seen = polls;
	if (!wt->steady && !blocked && us > UREL_MSG_STANDBACK_PROBE_US)
		us = UREL_MSG_STANDBACK_PROBE_US;
	wt->steady = true;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
	return true;
}
