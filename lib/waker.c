// SPDX-License-Identifier: MIT
/*
 * libusnicrel: a blocking call's wake-up by another thread (waker.h). A
 * sleep counts itself under the owner's lock after checking, under that
 * lock, that it still has to wait; a waker writes the eventfd under the
 * same lock only while someone sleeps. So no completion can fall between
 * the check and the sleep unseen.
 */
#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"
#include "waker.h"

void urel_waker_init(struct urel_waker *wk)
{
	*wk = (struct urel_waker){ .fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
}

void urel_waker_fini(struct urel_waker *wk)
{
	if (wk->fd >= 0)
		close(wk->fd);
	wk->fd = -1;
}

void urel_waker_wake(struct urel_waker *wk)
{
	uint64_t one = 1;

	if (wk->sleepers && wk->fd >= 0 && write(wk->fd, &one, sizeof(one)) < 0)
		return; /* full (never drained?): it is readable anyway */
}

/* Under the owner's lock: a wake-up is pending. */
static bool urel_waker_pending(const struct urel_waker *wk)
{
	struct pollfd pfd = { .fd = wk->fd, .events = POLLIN };

	return wk->fd >= 0 && poll(&pfd, 1, 0) > 0;
}

int urel_waker_sleep_with(struct urel_waker *wk, void (*lock)(void *), void (*unlock)(void *),
			  void *lk, struct urel_device *dev, bool (*ready)(void *arg), void *arg,
			  int ms)
{
	uint64_t drain;
	bool ok;
	int n;

	lock(lk);
	ok = ready(arg);
	if (!ok)
		__atomic_fetch_add(&wk->sleepers, 1, __ATOMIC_RELAXED);
	unlock(lk);
	if (ok)
		return 1;
	__atomic_fetch_add(&wk->sleeps, 1, __ATOMIC_RELAXED);
	n = urel_device_wait_fd(dev, wk->fd, ms);
	lock(lk);
	ok = ready(arg);
	/* Done while we slept, and nobody woke us: a wake-up lost. */
	if (!n && ok && !urel_waker_pending(wk))
		__atomic_fetch_add(&wk->late_wakeups, 1, __ATOMIC_RELAXED);
	if (__atomic_sub_fetch(&wk->sleepers, 1, __ATOMIC_RELAXED) == 0 && wk->fd >= 0) {
		ssize_t got = read(wk->fd, &drain, sizeof(drain));

		(void)got; /* -EAGAIN: nothing was pending */
	}
	unlock(lk);
	if (ok)
		return 1;
	return n < 0 && n != -EINTR ? n : 0;
}

static void urel_waker_mutex_lock(void *lock)
{
	pthread_mutex_lock(lock);
}

static void urel_waker_mutex_unlock(void *lock)
{
	pthread_mutex_unlock(lock);
}

int urel_waker_sleep(struct urel_waker *wk, pthread_mutex_t *lock, struct urel_device *dev,
		     bool (*ready)(void *arg), void *arg, int ms)
{
	return urel_waker_sleep_with(wk, urel_waker_mutex_lock, urel_waker_mutex_unlock, lock, dev,
				     ready, arg, ms);
}
