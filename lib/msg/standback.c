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
 * computes, the thread serves arrivals again as they come.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

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
