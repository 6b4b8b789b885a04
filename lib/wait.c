// SPDX-License-Identifier: MIT
/*
 * libusnicrel: blocking until completions arrive. The module wakes poll on
 * the device when it posts a completion on any endpoint of the open file.
 * Sends the kernel left queued (socket buffer or completion ring full) post
 * no completion until handed over again, so a waiter hands them over first
 * and, if the kernel still holds back, sleeps in short slices.
 */
#include <errno.h>
#include <poll.h>

#include "internal.h"

/* Retry interval while the kernel leaves sends queued. */
#define UREL_WAIT_RETRY_MS 1

static bool urel_device_kick_all(struct urel_device *dev)
{
	bool stalled = false;

	pthread_mutex_lock(&dev->lock);
	for (struct urel_ep *ep = dev->eps; ep; ep = ep->next) {
		if (urel_sq_kick(ep) >= 0) {
			for (unsigned int c = 0; c < USNIC_REL_NR_CHANS; c++)
				stalled |= urel_load_acquire(ep->sq[c].tail) !=
					   urel_load_acquire(ep->sq[c].head);
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return stalled;
}

/*
 * urel_device_wait(), also woken when @fd (ignored if negative) becomes
 * readable: a layer whose completions another thread may dispatch while
 * this one sleeps has that thread wake it there (lib/osc/ctx.c).
 */
int urel_device_wait_fd(struct urel_device *dev, int fd, int timeout_ms)
{
	struct pollfd pfd[2];
	int n, slice;

	if (!dev || timeout_ms < -1)
		return -EINVAL;
	pfd[0].fd = dev->fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = fd;
	pfd[1].events = POLLIN;
	for (;;) {
		slice = timeout_ms;
		if (urel_device_kick_all(dev) &&
		    (timeout_ms < 0 || timeout_ms > UREL_WAIT_RETRY_MS))
			slice = UREL_WAIT_RETRY_MS;
		n = poll(pfd, 2, slice);
		if (n < 0)
			return -errno;
		if (n > 0)
			return (pfd[0].revents | pfd[1].revents) & POLLIN ? 1 : -EIO;
		if (slice == timeout_ms)
			return 0;
		if (timeout_ms > 0)
			timeout_ms -= slice;
	}
}

UREL_API int urel_device_wait(struct urel_device *dev, int timeout_ms)
{
	return urel_device_wait_fd(dev, -1, timeout_ms);
}
