// SPDX-License-Identifier: MIT
/*
 * libusnicrel: active-message dispatch (see am.h). One dispatcher per
 * endpoint, shared by the layers that use it and found through a
 * process-wide list, so two layers on one endpoint do not fight over its
 * single receive handler.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "am.h"
#include "internal.h"

struct urel_am_slot {
	urel_am_fn fn;
	void *arg;
};

struct urel_am {
	struct urel_am *next;
	struct urel_ep *ep;
	unsigned int refs;
	pthread_mutex_t lock; /* serialises changes to the table; dispatch reads it atomically */
	struct urel_am_slot slot[UREL_AM_NR];
	uint64_t dropped; /* atomic */
};

static pthread_mutex_t urel_am_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urel_am *urel_am_list;

static int urel_am_dispatch(struct urel_ep *ep, const struct urel_completion *c, void *arg)
{
	struct urel_am *am = arg;
	struct urel_am_hdr h;
	struct urel_am_slot s = { 0 };

	(void)ep;
	if (c->len < sizeof(h))
		goto drop;
	memcpy(&h, c->data, sizeof(h));
	h.seq = le32toh(h.seq);
	if (h.version != UREL_AM_VERSION || h.handler >= UREL_AM_NR)
		goto drop;
	/*
	 * No lock per message: the function is published after its argument
	 * (urel_am_register()), so one read of it sees the argument too.
	 */
	s.fn = __atomic_load_n(&am->slot[h.handler].fn, __ATOMIC_ACQUIRE);
	if (!s.fn)
		goto drop;
	s.arg = __atomic_load_n(&am->slot[h.handler].arg, __ATOMIC_RELAXED);
	return s.fn(s.arg, &h, c, (const char *)c->data + sizeof(h), c->len - sizeof(h)) ==
			       UREL_RECV_AGAIN
		       ? UREL_RECV_AGAIN
		       : 0;
drop:
	__atomic_fetch_add(&am->dropped, 1, __ATOMIC_RELAXED);
	return 0;
}

int urel_am_get(struct urel_ep *ep, struct urel_am **amp)
{
	struct urel_am *am;
	int ret = 0;

	pthread_mutex_lock(&urel_am_list_lock);
	for (am = urel_am_list; am; am = am->next) {
		if (am->ep == ep) {
			am->refs++;
			goto out;
		}
	}
	pthread_mutex_lock(&ep->cq_lock);
	if (ep->recv_fn)
		ret = -EBUSY;
	pthread_mutex_unlock(&ep->cq_lock);
	if (ret)
		goto out;
	am = calloc(1, sizeof(*am));
	if (!am) {
		ret = -ENOMEM;
		goto out;
	}
	am->ep = ep;
	am->refs = 1;
	pthread_mutex_init(&am->lock, NULL);
	urel_ep_set_recv_handler(ep, urel_am_dispatch, am);
	am->next = urel_am_list;
	urel_am_list = am;
out:
	pthread_mutex_unlock(&urel_am_list_lock);
	if (!ret)
		*amp = am;
	return ret;
}

void urel_am_put(struct urel_am *am)
{
	struct urel_am **pp;

	if (!am)
		return;
	pthread_mutex_lock(&urel_am_list_lock);
	if (--am->refs) {
		pthread_mutex_unlock(&urel_am_list_lock);
		return;
	}
	for (pp = &urel_am_list; *pp != am; pp = &(*pp)->next)
		;
	*pp = am->next;
	urel_ep_set_recv_handler(am->ep, NULL, NULL);
	pthread_mutex_unlock(&urel_am_list_lock);
	/* A dispatch under way was handed @am when it began. */
	urel_progress_quiesce(am->ep);
	pthread_mutex_destroy(&am->lock);
	free(am);
}

int urel_am_register(struct urel_am *am, unsigned int id, urel_am_fn fn, void *arg)
{
	int ret = 0;

	if (!am || !id || id >= UREL_AM_NR || !fn)
		return -EINVAL;
	pthread_mutex_lock(&am->lock);
	if (am->slot[id].fn) {
		ret = -EBUSY;
	} else {
		__atomic_store_n(&am->slot[id].arg, arg, __ATOMIC_RELAXED);
		__atomic_store_n(&am->slot[id].fn, fn, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&am->lock);
	return ret;
}

void urel_am_unregister(struct urel_am *am, unsigned int id)
{
	if (!am || id >= UREL_AM_NR)
		return;
	pthread_mutex_lock(&am->lock);
	__atomic_store_n(&am->slot[id].fn, NULL, __ATOMIC_RELEASE);
	/*
	 * The caller frees the argument next, and a dispatch under way may
	 * have read the function already. Waited for under the lock, so that
	 * no register puts another argument beside the old function either.
	 */
	urel_progress_quiesce(am->ep);
	pthread_mutex_unlock(&am->lock);
}

struct urel_device *urel_am_device(const struct urel_am *am)
{
	return am->ep->dev;
}

uint64_t urel_am_dropped(const struct urel_am *am)
{
	return __atomic_load_n(&am->dropped, __ATOMIC_RELAXED);
}
