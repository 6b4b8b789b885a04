// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: the context lock's slow paths (lock.h).
 * A thread that finds the lock held marks it 2 and sleeps on the futex
 * while it stays marked; whoever takes it after a sleep keeps the mark,
 * since other sleepers may remain, so that its release wakes the next one.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

void urel_msg_lock_wait(struct urel_msg_lock *l, int seen)
{
	if (seen != 2)
		seen = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	while (seen) {
		/* Returns at once (EAGAIN) when the lock changed since: then try again. */
		syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		seen = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	}
}

void urel_msg_lock_wake(struct urel_msg_lock *l)
{
	syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void urel_msg_lock_fn(void *l)
{
	urel_msg_lock(l);
}

void urel_msg_unlock_fn(void *l)
{
	urel_msg_unlock(l);
}
