// SPDX-License-Identifier: MIT
/*
 * libusnicrel: the tag-matching engine (see match.h). A specific receive
 * (one source, no ignore mask) can only accept messages whose (source, bits)
 * equal its own, so it sits in that key's bin; an arriving message examines
 * one bin plus the wildcard list and keeps the older candidate. Bins keep
 * insertion order, so the first accepting entry of a bin is its oldest.
 * Tables double when they average two entries a bin; rehashing walks each
 * old bin in order, so entries of one key keep their relative order.
 */
#include <errno.h>
#include <stdlib.h>

#include "match.h"

#define UREL_MATCH_BINS_MIN 64U
#define UREL_MATCH_BINS_MAX (1U << 20)

static uint32_t urel_match_hash(uint32_t src, uint64_t bits)
{
	uint64_t h = bits ^ ((uint64_t)src << 32 | src) * 0x9e3779b97f4a7c15ULL;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

static void urel_list_append(struct urel_match_list *l, struct urel_match_entry *e)
{
	e->next = NULL;
	e->prev = l->tail;
	if (l->tail)
		l->tail->next = e;
	else
		l->head = e;
	l->tail = e;
}

static void urel_list_unlink(struct urel_match_list *l, struct urel_match_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->next = e->prev = NULL;
}

static void urel_arrival_append(struct urel_match_list *l, struct urel_match_entry *e)
{
	e->anext = NULL;
	e->aprev = l->tail;
	if (l->tail)
		l->tail->anext = e;
	else
		l->head = e;
	l->tail = e;
}

static void urel_arrival_unlink(struct urel_match_list *l, struct urel_match_entry *e)
{
	if (e->aprev)
		e->aprev->anext = e->anext;
	else
		l->head = e->anext;
	if (e->anext)
		e->anext->aprev = e->aprev;
	else
		l->tail = e->aprev;
	e->anext = e->aprev = NULL;
}

static int urel_table_init(struct urel_match_table *t)
{
	t->bins = calloc(UREL_MATCH_BINS_MIN, sizeof(*t->bins));
	if (!t->bins)
		return -ENOMEM;
	t->mask = UREL_MATCH_BINS_MIN - 1;
	t->count = 0;
	return 0;
}

static struct urel_match_list *urel_table_bin(struct urel_match_table *t, uint32_t src,
					      uint64_t bits)
{
	return &t->bins[urel_match_hash(src, bits) & t->mask];
}

/* Double the bins; on allocation failure the table stays as it is (only slower). */
static int urel_table_grow(struct urel_match_table *t)
{
	uint32_t n = (t->mask + 1) * 2;
	struct urel_match_list *bins;

	if (n > UREL_MATCH_BINS_MAX)
		return 0;
	bins = calloc(n, sizeof(*bins));
	if (!bins)
		return -ENOMEM;
	for (uint32_t i = 0; i <= t->mask; i++) {
		struct urel_match_entry *e = t->bins[i].head, *next;

		for (; e; e = next) {
			next = e->next;
			urel_list_append(&bins[e->hash & (n - 1)], e);
		}
	}
	free(t->bins);
	t->bins = bins;
	t->mask = n - 1;
	return 0;
}

static int urel_table_add(struct urel_match_table *t, struct urel_match_entry *e)
{
	e->hash = urel_match_hash(e->src, e->bits);
	urel_list_append(&t->bins[e->hash & t->mask], e);
	if (++t->count > 2 * (t->mask + 1))
		return urel_table_grow(t);
	return 0;
}

static void urel_table_del(struct urel_match_table *t, struct urel_match_entry *e)
{
	urel_list_unlink(&t->bins[e->hash & t->mask], e);
	t->count--;
}

int urel_match_init(struct urel_match *m)
{
	*m = (struct urel_match){ 0 };
	if (urel_table_init(&m->posted))
		return -ENOMEM;
	if (urel_table_init(&m->unexp)) {
		free(m->posted.bins);
		m->posted.bins = NULL;
		return -ENOMEM;
	}
	return 0;
}

void urel_match_fini(struct urel_match *m)
{
	free(m->posted.bins);
	free(m->unexp.bins);
	m->posted.bins = m->unexp.bins = NULL;
}

static bool urel_match_hashable(const struct urel_match_entry *e)
{
	return e->src != UREL_MATCH_ANY_SRC && !e->ignore;
}

int urel_match_post(struct urel_match *m, struct urel_match_entry *e)
{
	e->stamp = ++m->stamp;
	e->where = UREL_MATCH_POSTED;
	e->bits &= ~e->ignore;
	if (!urel_match_hashable(e)) {
		urel_list_append(&m->wild, e);
		m->nwild++;
		return 0;
	}
	return urel_table_add(&m->posted, e);
}

int urel_match_add_unexpected(struct urel_match *m, struct urel_match_entry *e)
{
	e->stamp = ++m->stamp;
	e->where = UREL_MATCH_UNEXPECTED;
	e->ignore = 0;
	urel_arrival_append(&m->arrival, e);
	return urel_table_add(&m->unexp, e);
}

struct urel_match_entry *urel_match_incoming(struct urel_match *m, uint32_t src, uint64_t bits)
{
	struct urel_match_entry *best = NULL, *e;

	/* Only wildcard receives posted (or none): no bin to hash for. */
	e = m->posted.count ? urel_table_bin(&m->posted, src, bits)->head : NULL;
	for (; e; e = e->next) {
		m->comparisons++;
		if (e->src == src && e->bits == bits) {
			best = e;
			break;
		}
	}
	/* The wildcard list is in stamp order: stop at the first entry younger than best. */
	for (e = m->wild.head; e && (!best || e->stamp < best->stamp); e = e->next) {
		m->comparisons++;
		if (urel_match_accepts(e->src, e->bits, e->ignore, src, bits)) {
			best = e;
			break;
		}
	}
	if (best)
		urel_match_remove(m, best);
	return best;
}

struct urel_match_entry *urel_match_unexpected(struct urel_match *m, uint32_t src, uint64_t bits,
					       uint64_t ignore, bool take)
{
	struct urel_match_entry *e;

	/* A receive mostly finds nothing waiting: no hash, no scan then. */
	if (!m->unexp.count)
		return NULL;
	if (src != UREL_MATCH_ANY_SRC && !ignore) {
		for (e = urel_table_bin(&m->unexp, src, bits)->head; e; e = e->next) {
			m->comparisons++;
			if (e->src == src && e->bits == bits)
				break;
		}
	} else {
		for (e = m->arrival.head; e; e = e->anext) {
			m->comparisons++;
			if (urel_match_accepts(src, bits & ~ignore, ignore, e->src, e->bits))
				break;
		}
	}
	if (e && take)
		urel_match_remove(m, e);
	return e;
}

bool urel_match_remove(struct urel_match *m, struct urel_match_entry *e)
{
	switch (e->where) {
	case UREL_MATCH_POSTED:
		if (urel_match_hashable(e)) {
			urel_table_del(&m->posted, e);
		} else {
			urel_list_unlink(&m->wild, e);
			m->nwild--;
		}
		break;
	case UREL_MATCH_UNEXPECTED:
		urel_table_del(&m->unexp, e);
		urel_arrival_unlink(&m->arrival, e);
		break;
	default:
		return false;
	}
	e->where = UREL_MATCH_NONE;
	return true;
}

struct urel_match_entry *urel_match_take_posted(struct urel_match *m)
{
	struct urel_match_entry *e = m->wild.head;

	for (uint32_t i = 0; !e && m->posted.count && i <= m->posted.mask; i++)
		e = m->posted.bins[i].head;
	if (e)
		urel_match_remove(m, e);
	return e;
}

unsigned int urel_match_drain_posted(struct urel_match *m, uint32_t src,
				     void (*fn)(void *arg, struct urel_match_entry *e), void *arg)
{
	struct urel_match_entry *e, *next;
	unsigned int n = 0;

	for (e = m->wild.head; e; e = next) {
		next = e->next;
		if (e->src != src && e->src != UREL_MATCH_ANY_SRC)
			continue;
		urel_match_remove(m, e);
		fn(arg, e);
		n++;
	}
	for (uint32_t i = 0; m->posted.count && i <= m->posted.mask; i++) {
		for (e = m->posted.bins[i].head; e; e = next) {
			next = e->next;
			if (e->src != src)
				continue;
			urel_match_remove(m, e);
			fn(arg, e);
			n++;
		}
	}
	return n;
}
