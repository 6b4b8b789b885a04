/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: waking a thread asleep on the device when another thread
 * completed what it waits for. Whoever takes a completion off a ring leaves
 * the device nothing to wake the sleeper for, so the layers that block
 * (tagged messages, windows) pair the device's fd with an eventfd of their
 * own. The owner's lock (the one its completions are dispatched under)
 * guards the sleeper count; the eventfd stays readable until the last
 * sleeper drains it.
 */
#ifndef UREL_WAKER_H
#define UREL_WAKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct urel_device;

struct urel_waker {
	int fd; /* eventfd; -1 (none left): sleepers wake by timeout only */
	unsigned int sleepers; /* changed under the owner's lock (atomic: read without it) */
	uint64_t late_wakeups; /* atomic: sleeps that timed out on what was already done */
	uint64_t sleeps; /* atomic: sleeps on the device */
};

void urel_waker_init(struct urel_waker *wk);
void urel_waker_fini(struct urel_waker *wk);
/* Under the owner's lock, after a change a blocking call may wait for. */
void urel_waker_wake(struct urel_waker *wk);
/*
 * Sleep on @dev until something arrives, urel_waker_wake(), or @ms pass;
 * @ready is called under @lock. Returns 1 when @ready, 0 to go on, or an
 * error of the wait.
 */
int urel_waker_sleep(struct urel_waker *wk, pthread_mutex_t *lock, struct urel_device *dev,
		     bool (*ready)(void *arg), void *arg, int ms);
/* The same for an owner whose lock is not a pthread mutex: taken through @lock, @unlock. */
int urel_waker_sleep_with(struct urel_waker *wk, void (*lock)(void *), void (*unlock)(void *),
			  void *lk, struct urel_device *dev, bool (*ready)(void *arg), void *arg,
			  int ms);
/* Without the owner's lock, as a hint: whether a blocking call sleeps on the device now. */
static inline bool urel_waker_busy(const struct urel_waker *wk)
{
	return __atomic_load_n(&wk->sleepers, __ATOMIC_RELAXED) != 0;
}

#endif
