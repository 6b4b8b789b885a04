// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: the process's budget of rendezvous windows.
 * RLIMIT_MEMLOCK is charged per process, so the windows of every context
 * (endpoint) count together: a send that cannot pin while any context of
 * the process holds windows waits for them to be read instead of failing.
 * Every release bumps a generation that waiting contexts compare with the
 * one they last tried at. Windows are released only by their own context's
 * progress (the receiver's WDONE), so a blocking call whose sends wait also
 * progresses the contexts that hold windows: an application blocked on one
 * context still sees the others' windows go. Non-blocking calls do not
 * (the caller progresses its contexts; the provider runs completion
 * callbacks of an endpoint only under that endpoint's lock).
 */
#include <pthread.h>

#include "../internal.h"
#include "msg.h"

static struct {
	pthread_mutex_t lock; /* the list of contexts */
	struct urel_msg *head; /* every open context, linked by pins_next */
	unsigned long windows; /* atomic: held now, every context */
	uint64_t bytes, peak; /* atomic: bytes in them now, and at most */
	unsigned long gen; /* atomic: windows released so far */
} urel_msg_pins = { .lock = PTHREAD_MUTEX_INITIALIZER };

void urel_msg_pins_join(struct urel_msg *m)
{
	pthread_mutex_lock(&urel_msg_pins.lock);
	m->pins_next = urel_msg_pins.head;
	urel_msg_pins.head = m;
	pthread_mutex_unlock(&urel_msg_pins.lock);
}

/* Before @m goes: no other context progresses it from then on. */
void urel_msg_pins_leave(struct urel_msg *m)
{
	struct urel_msg **pp;

	pthread_mutex_lock(&urel_msg_pins.lock);
	for (pp = &urel_msg_pins.head; *pp; pp = &(*pp)->pins_next) {
		if (*pp == m) {
			*pp = m->pins_next;
			break;
		}
	}
	pthread_mutex_unlock(&urel_msg_pins.lock);
}

/* A window of @len bytes was registered. Under m->lock. */
void urel_msg_pins_take(struct urel_msg *m, size_t len)
{
	uint64_t now, peak;

	__atomic_add_fetch(&m->pinned, 1, __ATOMIC_RELAXED);
	m->win_count++;
	m->win_bytes += len;
	__atomic_add_fetch(&urel_msg_pins.windows, 1, __ATOMIC_RELAXED);
	now = __atomic_add_fetch(&urel_msg_pins.bytes, len, __ATOMIC_RELAXED);
	peak = __atomic_load_n(&urel_msg_pins.peak, __ATOMIC_RELAXED);
	while (now > peak && !__atomic_compare_exchange_n(&urel_msg_pins.peak, &peak, now, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A window of @len bytes was deregistered. Under m->lock. */
void urel_msg_pins_drop(struct urel_msg *m, size_t len)
{
	__atomic_sub_fetch(&m->pinned, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&urel_msg_pins.bytes, len, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&urel_msg_pins.windows, 1, __ATOMIC_RELAXED);
	/* After the count: a waiter that sees the new generation sees the room too. */
	__atomic_add_fetch(&urel_msg_pins.gen, 1, __ATOMIC_RELEASE);
}

unsigned long urel_msg_pins_gen(void)
{
	return __atomic_load_n(&urel_msg_pins.gen, __ATOMIC_ACQUIRE);
}

/* Windows held by every context of the process. */
unsigned long urel_msg_pins_held(void)
{
	return __atomic_load_n(&urel_msg_pins.windows, __ATOMIC_ACQUIRE);
}

void urel_msg_pins_usage(uint64_t *bytes, uint64_t *peak)
{
	*bytes = __atomic_load_n(&urel_msg_pins.bytes, __ATOMIC_RELAXED);
	*peak = __atomic_load_n(&urel_msg_pins.peak, __ATOMIC_RELAXED);
}

/*
 * @m has sends waiting for pinned memory and its caller blocks: progress
 * the other contexts that hold windows, so the WDONEs that release them
 * are taken. Without @m's lock. One thread helps at a time (trylock: no
 * wait, and a helped context's pass cannot come back here); a context
 * being closed waits in urel_msg_pins_leave() until this is done.
 */
void urel_msg_pins_help(struct urel_msg *m)
{
	if (pthread_mutex_trylock(&urel_msg_pins.lock))
		return;
	for (struct urel_msg *o = urel_msg_pins.head; o; o = o->pins_next) {
		/* A serial endpoint's calls are its caller's alone (UREL_EP_SERIAL). */
		if (o != m && !o->ep->serial && __atomic_load_n(&o->pinned, __ATOMIC_RELAXED))
			urel_msg_progress_one(o, false);
	}
	pthread_mutex_unlock(&urel_msg_pins.lock);
}
