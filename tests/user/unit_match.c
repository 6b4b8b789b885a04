// SPDX-License-Identifier: MIT
/*
 * Host unit test of the tag-matching engine alone (lib/msg/match.c):
 * oldest match wins across specific and wildcard receives, the unexpected
 * queue keeps arrival order, probes leave messages queued and claims take
 * them, cancel takes receives off; a failed peer's receives (and every
 * receive from any source) drain, nothing else; a long random run checked step by step
 * against a linear-scan model; and 10 000 posted receives plus 10 000
 * unexpected messages whose work is counted in comparisons, not timed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../lib/msg/match.h"

#include "urt.h"

static struct urel_match_entry *recv_entry(uint32_t src, uint64_t bits, uint64_t ignore)
{
	struct urel_match_entry *e = calloc(1, sizeof(*e));

	e->src = src;
	e->bits = bits;
	e->ignore = ignore;
	return e;
}

static void check_order(void)
{
	struct urel_match m;
	struct urel_match_entry *spec, *wild, *spec2, *e, *u1, *u2, *u3;

	URT_CHECK_EQ(urel_match_init(&m), 0);
	/* A wildcard posted before a specific receive wins; then the specific one. */
	wild = recv_entry(UREL_MATCH_ANY_SRC, 0x10, 0xf);
	spec = recv_entry(3, 0x12, 0);
	spec2 = recv_entry(3, 0x12, 0);
	urel_match_post(&m, wild);
	urel_match_post(&m, spec);
	urel_match_post(&m, spec2);
	URT_CHECK(urel_match_incoming(&m, 3, 0x12) == wild);
	URT_CHECK(urel_match_incoming(&m, 3, 0x12) == spec);
	/* A specific receive posted before a wildcard wins. */
	urel_match_post(&m, wild);
	URT_CHECK(urel_match_incoming(&m, 3, 0x12) == spec2);
	URT_CHECK(urel_match_incoming(&m, 4, 0x1f) == wild);
	URT_CHECK(urel_match_incoming(&m, 4, 0x1f) == NULL);
	/* Bits outside the ignore mask must match; the source must match. */
	urel_match_post(&m, spec);
	URT_CHECK(urel_match_incoming(&m, 3, 0x13) == NULL);
	URT_CHECK(urel_match_incoming(&m, 2, 0x12) == NULL);
	URT_CHECK(urel_match_remove(&m, spec));
	URT_CHECK(!urel_match_remove(&m, spec));

	/* Unexpected: arrival order, probes leave them, claims take them. */
	u1 = recv_entry(1, 0x20, 0);
	u2 = recv_entry(2, 0x21, 0);
	u3 = recv_entry(1, 0x20, 0);
	urel_match_add_unexpected(&m, u1);
	urel_match_add_unexpected(&m, u2);
	urel_match_add_unexpected(&m, u3);
	URT_CHECK(urel_match_unexpected(&m, UREL_MATCH_ANY_SRC, 0x20, 0xf, false) == u1);
	URT_CHECK(urel_match_unexpected(&m, 1, 0x20, 0, false) == u1);
	URT_CHECK(urel_match_unexpected(&m, 2, 0x20, 0xf, true) == u2);
	URT_CHECK(urel_match_unexpected(&m, 2, 0x20, 0xf, true) == NULL);
	URT_CHECK(urel_match_unexpected(&m, 1, 0x20, 0, true) == u1);
	URT_CHECK(urel_match_unexpected(&m, UREL_MATCH_ANY_SRC, 0, UINT64_MAX, true) == u3);
	URT_CHECK(urel_match_unexpected(&m, UREL_MATCH_ANY_SRC, 0, UINT64_MAX, true) == NULL);
	/* Teardown drains posted receives of both kinds. */
	urel_match_post(&m, spec);
	urel_match_post(&m, wild);
	e = urel_match_take_posted(&m);
	URT_CHECK(e == spec || e == wild);
	URT_CHECK(urel_match_take_posted(&m) != NULL);
	URT_CHECK(urel_match_take_posted(&m) == NULL);
	free(spec);
	free(spec2);
	free(wild);
	free(u1);
	free(u2);
	free(u3);
	urel_match_fini(&m);
}

/* --- random run against a linear model --------------------------------- */

#define POOL 512
#define STEPS 200000

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct model {
	struct urel_match_entry *posted[POOL], *unexp[POOL];
	unsigned int nposted, nunexp;
};

static void model_del(struct urel_match_entry **q, unsigned int *n, unsigned int i)
{
	for (; i + 1 < *n; i++)
		q[i] = q[i + 1];
	(*n)--;
}

static struct urel_match_entry *model_incoming(struct model *md, uint32_t src, uint64_t bits)
{
	for (unsigned int i = 0; i < md->nposted; i++) {
		struct urel_match_entry *e = md->posted[i];

		if (urel_match_accepts(e->src, e->bits, e->ignore, src, bits)) {
			model_del(md->posted, &md->nposted, i);
			return e;
		}
	}
	return NULL;
}

static struct urel_match_entry *model_unexp(struct model *md, uint32_t src, uint64_t bits,
					    uint64_t ignore, bool take)
{
	for (unsigned int i = 0; i < md->nunexp; i++) {
		struct urel_match_entry *e = md->unexp[i];

		if (urel_match_accepts(src, bits & ~ignore, ignore, e->src, e->bits)) {
			if (take)
				model_del(md->unexp, &md->nunexp, i);
			return e;
		}
	}
	return NULL;
}

static uint32_t rnd_src(bool any)
{
	return any && rnd() % 4 == 0 ? UREL_MATCH_ANY_SRC : (uint32_t)(rnd() % 4);
}

static uint64_t rnd_ignore(void)
{
	static const uint64_t masks[] = { 0, 0, 0, 1, 3, 0x6, UINT64_MAX };

	return masks[rnd() % (sizeof(masks) / sizeof(masks[0]))];
}

static void check_random(void)
{
	static struct urel_match_entry pool[POOL];
	struct urel_match_entry *free_list[POOL], *a, *b;
	unsigned int nfree = POOL, mismatches = 0, matched = 0, max_posted = 0, max_unexp = 0;
	struct model md = { 0 };
	struct urel_match m;

	for (unsigned int i = 0; i < POOL; i++)
		free_list[i] = &pool[i];
	URT_CHECK_EQ(urel_match_init(&m), 0);
	/* Stop at the first divergence: the queues no longer mean anything after it. */
	for (unsigned int step = 0; step < STEPS && !mismatches; step++) {
		/* Phases: balanced, receives ahead (deep posted queue), messages ahead. */
		unsigned int phase = step / 5000 % 3, op = (unsigned int)(rnd() % 10);

		if (phase == 1 && op >= 4 && op < 8 && rnd() % 3)
			op = 0;
		else if (phase == 2 && op < 4 && rnd() % 3)
			op = 4;
		max_posted = md.nposted > max_posted ? md.nposted : max_posted;
		max_unexp = md.nunexp > max_unexp ? md.nunexp : max_unexp;
		uint32_t src = rnd_src(true);
		uint64_t bits = rnd() % 8, ignore = rnd_ignore();

		if (op < 4 && nfree) {
			/* Post a receive: first the unexpected queue, as the protocol does. */
			a = urel_match_unexpected(&m, src, bits & ~ignore, ignore, true);
			b = model_unexp(&md, src, bits, ignore, true);
			mismatches += a != b;
			if (a) {
				free_list[nfree++] = a;
				matched++;
				continue;
			}
			a = free_list[--nfree];
			*a = (struct urel_match_entry){ .src = src,
							.bits = bits,
							.ignore = ignore };
			urel_match_post(&m, a);
			md.posted[md.nposted++] = a;
		} else if (op < 8 && nfree) {
			/* A message arrives. */
			src = rnd_src(false);
			a = urel_match_incoming(&m, src, bits);
			b = model_incoming(&md, src, bits);
			mismatches += a != b;
			if (a) {
				free_list[nfree++] = a;
				matched++;
				continue;
			}
			a = free_list[--nfree];
			*a = (struct urel_match_entry){ .src = src, .bits = bits };
			urel_match_add_unexpected(&m, a);
			md.unexp[md.nunexp++] = a;
		} else if (op == 8) {
			/* Probe (stays) or claim (taken). */
			bool take = rnd() & 1;

			a = urel_match_unexpected(&m, src, bits & ~ignore, ignore, take);
			b = model_unexp(&md, src, bits, ignore, take);
			mismatches += a != b;
			if (a && take)
				free_list[nfree++] = a;
		} else if (md.nposted) {
			/* Cancel a random posted receive. */
			unsigned int i = (unsigned int)(rnd() % md.nposted);

			a = md.posted[i];
			model_del(md.posted, &md.nposted, i);
			URT_CHECK(urel_match_remove(&m, a));
			URT_CHECK(!urel_match_remove(&m, a));
			free_list[nfree++] = a;
		}
	}
	URT_CHECK_EQ(mismatches, 0);
	URT_CHECK(matched > STEPS / 10);
	URT_CHECK(max_posted > 100 && max_unexp > 100);
	printf("unit_match: random run: %u steps, %u matches, queues up to %u posted, %u "
	       "unexpected\n",
	       STEPS, matched, max_posted, max_unexp);
	urel_match_fini(&m);
}

/* --- 10 000 x 10 000: counted work -------------------------------------- */

#define BIG 10000

static void check_big(void)
{
	struct urel_match_entry *e = calloc(2 * BIG, sizeof(*e)), *got;
	struct urel_match m;
	uint64_t before, linear;
	unsigned int wrong = 0;

	URT_CHECK_EQ(urel_match_init(&m), 0);
	/* 10 000 posted receives from 100 sources with distinct tags, plus 10 000
	 * unexpected messages that none of them accept (another tag range). */
	for (unsigned int i = 0; i < BIG; i++) {
		e[i] = (struct urel_match_entry){ .src = i % 100, .bits = i };
		urel_match_post(&m, &e[i]);
		e[BIG + i] = (struct urel_match_entry){ .src = i % 100, .bits = (1ULL << 40) + i };
		urel_match_add_unexpected(&m, &e[BIG + i]);
	}
	/* One wildcard receive posted last: older specific receives win anyway. */
	struct urel_match_entry wild = { .src = UREL_MATCH_ANY_SRC, .ignore = UINT64_MAX };

	urel_match_post(&m, &wild);
	before = m.comparisons;
	/* Messages arrive newest tag first: each finds its receive in its bin. */
	for (unsigned int i = BIG; i-- > 0;) {
		got = urel_match_incoming(&m, i % 100, i);
		wrong += got != &e[i];
	}
	/* Receives for the unexpected messages, oldest last. */
	for (unsigned int i = BIG; i-- > 0;) {
		got = urel_match_unexpected(&m, i % 100, (1ULL << 40) + i, 0, true);
		wrong += got != &e[BIG + i];
	}
	URT_CHECK_EQ(wrong, 0);
	URT_CHECK(urel_match_incoming(&m, 7, 7) == &wild);
	/* A linear scan would examine on average half of each queue per operation. */
	linear = (uint64_t)BIG * BIG / 2 * 2;
	printf("unit_match: 10000 posted + 10000 unexpected: %llu comparisons for 20000 matches "
	       "(%.2f each; a linear scan needs about %llu)\n",
	       (unsigned long long)(m.comparisons - before),
	       (double)(m.comparisons - before) / (2 * BIG), (unsigned long long)linear);
	URT_CHECK(m.comparisons - before <= 8ULL * 2 * BIG);
	urel_match_fini(&m);
	free(e);
}

struct drained {
	struct urel_match_entry *got[8];
	unsigned int n;
};

static void take(void *arg, struct urel_match_entry *e)
{
	struct drained *d = arg;

	URT_CHECK(d->n < 8);
	if (d->n < 8)
		d->got[d->n++] = e;
}

/* Source 5 failed: its receives and the any-source ones go, source 6's stay and still match. */
static void check_drain(void)
{
	struct urel_match_entry *a = recv_entry(5, 1, 0), *b = recv_entry(6, 1, 0),
				*c = recv_entry(UREL_MATCH_ANY_SRC, 2, 0),
				*d = recv_entry(5, 0, UINT64_MAX), *f = recv_entry(6, 0, 0xff),
				*u = recv_entry(5, 9, 0);
	struct drained got = { .n = 0 };
	struct urel_match m;

	URT_CHECK_EQ(urel_match_init(&m), 0);
	urel_match_post(&m, a);
	urel_match_post(&m, b);
	urel_match_post(&m, c);
	urel_match_post(&m, d);
	urel_match_post(&m, f);
	urel_match_add_unexpected(&m, u);
	URT_CHECK_EQ(urel_match_drain_posted(&m, 5, take, &got), 3);
	URT_CHECK_EQ(got.n, 3);
	/* The wildcard list first (oldest first), then the bins. */
	URT_CHECK(got.got[0] == c && got.got[1] == d && got.got[2] == a);
	for (unsigned int i = 0; i < got.n; i++)
		URT_CHECK_EQ(got.got[i]->where, UREL_MATCH_NONE);
	URT_CHECK(urel_match_incoming(&m, 5, 1) == NULL);
	URT_CHECK(urel_match_incoming(&m, 6, 1) == b);
	URT_CHECK(urel_match_incoming(&m, 6, 7) == f);
	/* Unexpected messages already in are not receives: they stay. */
	URT_CHECK(urel_match_unexpected(&m, 5, 9, 0, true) == u);
	URT_CHECK_EQ(urel_match_drain_posted(&m, 5, take, &got), 0);
	urel_match_fini(&m);
	free(a);
	free(b);
	free(c);
	free(d);
	free(f);
	free(u);
}

int main(void)
{
	check_order();
	check_drain();
	check_random();
	check_big();
	return urt_done("unit_match");
}
