/* SPDX-License-Identifier: MIT */
/*
 * Match rate of the tag-matching engine (lib/msg/match.c, the code the
 * library runs, linked from libusnicrel.a) against a linear scan of one
 * list with the same semantics (oldest accepting entry wins). Host only:
 * no device, no VM.
 *
 *   msg_match [-n DEPTH] [-s SOURCES] [-t SECONDS]
 *
 * Two steady-state runs, each at a queue depth of DEPTH (default 10 000)
 * entries with distinct (source, match bits) keys over SOURCES (default
 * 64) sources:
 *   posted      DEPTH receives are posted; each message arrives for a key
 *               drawn at random, takes the oldest receive accepting it, and
 *               a new receive for the same key is posted (depth stays
 *               DEPTH);
 *   unexpected  DEPTH messages are queued unexpected; each receive names a
 *               random key, takes the oldest message it accepts, and a new
 *               message with that key arrives.
 * Both engines run the same sequence of operations (the same pseudo-random
 * keys) and must pick the same entries, which is checked. For each run:
 *
 *   msg_match run=posted depth=10000 engine=hash matches=N secs=S Mmatch_ps=R cmp_per_match=C
 *   msg_match run=posted depth=10000 engine=linear matches=N secs=S Mmatch_ps=R cmp_per_match=C
 *   msg_match run=posted depth=10000 ratio=X
 *
 * Each engine runs for about -t seconds (default 0.5), whole operations,
 * after one untimed pass of warm-up.
 */
#include "bench_util.h"

#include <getopt.h>
#include <stdbool.h>

#include "../lib/msg/match.h"

/* The baseline: one list in insertion order, scanned from the oldest. */
struct lin_entry {
	struct lin_entry *next, *prev;
	uint64_t bits, ignore;
	uint32_t src;
	uint32_t key; /* which key (for the cross-check) */
};

struct lin_list {
	struct lin_entry *head, *tail;
	uint64_t comparisons;
};

static void lin_append(struct lin_list *l, struct lin_entry *e)
{
	e->next = NULL;
	e->prev = l->tail;
	if (l->tail)
		l->tail->next = e;
	else
		l->head = e;
	l->tail = e;
}

static void lin_unlink(struct lin_list *l, struct lin_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
}

/* Posted receives: the oldest receive accepting a message (src, bits). */
static struct lin_entry *lin_incoming(struct lin_list *l, uint32_t src, uint64_t bits)
{
	for (struct lin_entry *e = l->head; e; e = e->next) {
		l->comparisons++;
		if (urel_match_accepts(e->src, e->bits, e->ignore, src, bits)) {
			lin_unlink(l, e);
			return e;
		}
	}
	return NULL;
}

/* Unexpected messages: the oldest one a receive (src, bits, ignore) accepts. */
static struct lin_entry *lin_unexpected(struct lin_list *l, uint32_t src, uint64_t bits,
					uint64_t ignore)
{
	for (struct lin_entry *e = l->head; e; e = e->next) {
		l->comparisons++;
		if (urel_match_accepts(src, bits & ~ignore, ignore, e->src, e->bits)) {
			lin_unlink(l, e);
			return e;
		}
	}
	return NULL;
}

static uint32_t nkeys, nsrc = 64;

static uint32_t key_src(uint32_t k)
{
	return k % nsrc + 1;
}

/* An MPI-like packing: context 1, source rank, tag (the key's index). */
static uint64_t key_bits(uint32_t k)
{
	return 1ull << 50 | (uint64_t)key_src(k) << 32 | k;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng_key(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % nkeys);
}

/* What one engine did: rate and comparisons; keys matched go to @trace (for the check). */
struct result {
	uint64_t ops, ns, cmp;
};

struct hash_side {
	struct urel_match m;
	struct urel_match_entry *e; /* nkeys entries, e[k] has key k */
};

static void hash_fill(struct hash_side *h, bool posted)
{
	if (urel_match_init(&h->m)) {
		fprintf(stderr, "msg_match: urel_match_init failed\n");
		exit(1);
	}
	h->e = calloc(nkeys, sizeof(*h->e));
	if (!h->e)
		exit(1);
	for (uint32_t k = 0; k < nkeys; k++) {
		h->e[k].src = key_src(k);
		h->e[k].bits = key_bits(k);
		if ((posted ? urel_match_post(&h->m, &h->e[k])
			    : urel_match_add_unexpected(&h->m, &h->e[k])) < 0)
			exit(1);
	}
}

/* One operation on the engine: match key @k, put it back; returns the entry's key. */
static uint32_t hash_op(struct hash_side *h, bool posted, uint32_t k)
{
	struct urel_match_entry *e;

	if (posted)
		e = urel_match_incoming(&h->m, key_src(k), key_bits(k));
	else
		e = urel_match_unexpected(&h->m, key_src(k), key_bits(k), 0, true);
	if (!e) {
		fprintf(stderr, "msg_match: engine found no match for key %u\n", k);
		exit(1);
	}
	e->ignore = 0;
	if (posted)
		urel_match_post(&h->m, e);
	else
		urel_match_add_unexpected(&h->m, e);
	return (uint32_t)(e - h->e);
}

struct lin_side {
	struct lin_list l;
	struct lin_entry *e;
};

static void lin_fill(struct lin_side *s)
{
	s->l = (struct lin_list){ 0 };
	s->e = calloc(nkeys, sizeof(*s->e));
	if (!s->e)
		exit(1);
	for (uint32_t k = 0; k < nkeys; k++) {
		s->e[k].src = key_src(k);
		s->e[k].bits = key_bits(k);
		s->e[k].key = k;
		lin_append(&s->l, &s->e[k]);
	}
}

static uint32_t lin_op(struct lin_side *s, bool posted, uint32_t k)
{
	struct lin_entry *e = posted ? lin_incoming(&s->l, key_src(k), key_bits(k))
				     : lin_unexpected(&s->l, key_src(k), key_bits(k), 0);

	if (!e) {
		fprintf(stderr, "msg_match: linear scan found no match for key %u\n", k);
		exit(1);
	}
	lin_append(&s->l, e);
	return e->key;
}

/*
 * Run @posted's scenario on both engines. The operations are the same
 * pseudo-random sequence for both; a first untimed pass of DEPTH
 * operations compares their picks step by step.
 */
static void run(bool posted, double secs)
{
	const char *name = posted ? "posted" : "unexpected";
	struct hash_side h;
	struct lin_side s;
	struct result rh = { 0 }, rl = { 0 };
	uint64_t seed;

	hash_fill(&h, posted);
	lin_fill(&s);
	/* Warm-up and cross-check: one pass of nkeys operations on both. */
	for (uint32_t i = 0; i < nkeys; i++) {
		uint32_t k = rng_key();
		uint32_t a = hash_op(&h, posted, k), b = lin_op(&s, posted, k);

		if (a != b || a != k) {
			fprintf(stderr, "msg_match: %s: engines disagree at op %u (%u vs %u)\n",
				name, i, a, b);
			exit(1);
		}
	}
	/* Timed: batches of 1000 operations until @secs passed, the same keys for both. */
	seed = rng_state;
	for (int side = 0; side < 2; side++) {
		struct result *r = side ? &rl : &rh;
		uint64_t t0, c0 = side ? s.l.comparisons : h.m.comparisons;

		rng_state = seed;
		t0 = bench_now_ns();
		do {
			for (int i = 0; i < 1000; i++) {
				uint32_t k = rng_key();

				if (side)
					lin_op(&s, posted, k);
				else
					hash_op(&h, posted, k);
			}
			r->ops += 1000;
			r->ns = bench_now_ns() - t0;
		} while ((double)r->ns < secs * 1e9);
		r->cmp = (side ? s.l.comparisons : h.m.comparisons) - c0;
	}
	for (int side = 0; side < 2; side++) {
		struct result *r = side ? &rl : &rh;

		printf("msg_match run=%s depth=%u engine=%s matches=%llu secs=%.3f Mmatch_ps=%.6f "
		       "cmp_per_match=%.1f\n",
		       name, nkeys, side ? "linear" : "hash", (unsigned long long)r->ops,
		       (double)r->ns / 1e9, (double)r->ops / ((double)r->ns / 1e3),
		       (double)r->cmp / (double)r->ops);
	}
	printf("msg_match run=%s depth=%u ratio=%.2f\n", name, nkeys,
	       ((double)rh.ops / (double)rh.ns) / ((double)rl.ops / (double)rl.ns));
	fflush(stdout);
	urel_match_fini(&h.m);
	free(h.e);
	free(s.e);
}

static void usage(void)
{
	fprintf(stderr, "usage: msg_match [-n DEPTH] [-s SOURCES] [-t SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double secs = 0.5;
	int opt;

	nkeys = 10000;
	while ((opt = getopt(argc, argv, "n:s:t:")) != -1) {
		switch (opt) {
		case 'n':
			nkeys = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			nsrc = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (nkeys < 1 || nkeys > (1u << 24) || nsrc < 1 || nsrc > (1u << 18) || secs <= 0)
		usage();
	run(true, secs);
	run(false, secs);
	return 0;
}
