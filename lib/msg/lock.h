/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel tagged messaging: the context's lock. A tiny message's echo
 * takes it three times (send, receive, arrival), so its uncontended path
 * is one atomic instruction each way, inline, where a pthread mutex costs
 * two library calls and some fifty instructions. Contended, a waiter
 * sleeps on a futex: 0 free, 1 held, 2 held and someone may sleep (the
 * release then wakes one).
 */
#ifndef UREL_MSG_LOCK_H
#define UREL_MSG_LOCK_H

#include <stdbool.h>

struct urel_msg_lock {
	int state; /* 0 free, 1 held, 2 held with sleepers possible */
};

void urel_msg_lock_wait(struct urel_msg_lock *l, int seen);
void urel_msg_lock_wake(struct urel_msg_lock *l);

static inline void urel_msg_lock(struct urel_msg_lock *l)
{
	int seen = 0;

	if (!__atomic_compare_exchange_n(&l->state, &seen, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		urel_msg_lock_wait(l, seen);
}

static inline void urel_msg_unlock(struct urel_msg_lock *l)
{
	if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
		urel_msg_lock_wake(l);
}

/* For urel_waker_sleep(), which takes the lock through pointers. */
void urel_msg_lock_fn(void *l);
void urel_msg_unlock_fn(void *l);

#endif /* UREL_MSG_LOCK_H */
