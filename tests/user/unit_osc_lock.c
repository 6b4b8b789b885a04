// SPDX-License-Identifier: MIT
/*
 * Host unit test of the window lock manager alone (lib/osc/lockmgr.c):
 * shared locks share, exclusive ones exclude, the queue is FIFO, a shared
 * request never overtakes a queued exclusive one, a release grants one
 * exclusive or a run of shared requests; bad releases change nothing. A
 * random run is checked against a model of the same rules. With a lock
 * word (lib/osc/lockword.c), origins' remote swaps are played here with
 * the same atomics the kernel uses: the manager never grants while an
 * origin owns the word, a release the manager waits for always reaches
 * it, and FIFO order holds across the two paths; readers holding the
 * word by their bits share it, never past a queued request, the last one
 * out hands it to the manager, and a dead reader's bit is taken back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../lib/osc/osc.h"

#include "urt.h"

#define SH UREL_WIN_LOCK_SHARED
#define EX UREL_WIN_LOCK_EXCLUSIVE

static struct urel_osc_lockreq *req(int type, int origin)
{
	struct urel_osc_lockreq *r = calloc(1, sizeof(*r));

	r->type = type;
	r->origin = origin;
	return r;
}

static int count(struct urel_osc_lockreq *g)
{
	int n = 0;

	while (g) {
		struct urel_osc_lockreq *next = g->next;

		n++;
		free(g);
		g = next;
	}
	return n;
}

static void check_rules(void)
{
	struct urel_osc_lockmgr lm = { 0 };
	struct urel_osc_lockreq *a = req(SH, 0), *b = req(SH, 1), *x = req(EX, 2), *c = req(SH, 3),
				*d = req(SH, 4), *y = req(EX, 5), *g;

	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, a), 1);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, b), 1); /* shared shares */
	URT_CHECK_EQ(lm.shared, 2);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x), 0); /* exclusive waits */
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, c), 0); /* shared does not overtake it */
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, d), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, y), 0);
	URT_CHECK_EQ(lm.queued, 4);
	/* Bad releases: wrong type, changes nothing. */
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), -EINVAL);
	URT_CHECK(!g);
	URT_CHECK_EQ(lm.shared, 2);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g); /* one shared holder left */
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(g == x && !g->next); /* the exclusive one alone */
	URT_CHECK_EQ(lm.type, EX);
	free(a);
	free(b);
	free(x);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(g == c && c->next == d && !d->next); /* the run of shared ones, in order */
	URT_CHECK_EQ(lm.shared, 2);
	free(c);
	free(d);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(g == y);
	free(y);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(!g && !lm.type && !lm.queued && !lm.head);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), -EINVAL); /* nothing held */
	a = req(3, 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, a), -EINVAL);
	free(a);
}

/* Model: holders and a FIFO; the manager must grant exactly what the rules say. */
/*
 * A dead origin's waiting requests leave the queue, wherever they are, and
 * what they held back is granted; the others keep their order.
 */
static void check_forget(void)
{
	struct urel_osc_lockmgr lm = { 0 };
	struct urel_osc_lockreq *a = req(SH, 0), *x = req(EX, 2), *c = req(SH, 3), *x2 = req(EX, 2),
				*d = req(SH, 4), *gone, *g;

	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, a), 1);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, c), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x2), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, d), 0);
	/* Nobody from 7: nothing changes. */
	urel_osc_lock_forget(&lm, 7, &gone, &g);
	URT_CHECK(!gone && !g);
	URT_CHECK_EQ(lm.queued, 4);
	/* Rank 2's two exclusive requests go; 3 shares with 0 at once, then 4. */
	urel_osc_lock_forget(&lm, 2, &gone, &g);
	URT_CHECK(gone == x && x->next == x2 && !x2->next);
	URT_CHECK(g == c && c->next == d && !d->next);
	URT_CHECK_EQ(lm.queued, 0);
	URT_CHECK(!lm.head && !lm.tail);
	URT_CHECK_EQ(lm.shared, 3);
	URT_CHECK_EQ(count(gone), 2);
	URT_CHECK_EQ(count(g), 2);
	/* A queue left behind a kept request still appends at its tail. */
	x = req(EX, 5);
	c = req(SH, 6);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, c), 0);
	urel_osc_lock_forget(&lm, 6, &gone, &g);
	URT_CHECK(gone == c && !g && lm.head == x && lm.tail == x);
	count(gone);
	d = req(SH, 8);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, d), 0);
	URT_CHECK(x->next == d && lm.tail == d);
	for (int i = 0; i < 3; i++)
		URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(g == x && !x->next);
	count(g);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(g == d);
	count(g);
	free(a);
}

static void check_random(void)
{
	struct urel_osc_lockmgr lm = { 0 };
	int held_sh = 0, held_ex = 0, qtype[4096], qhead = 0, qtail = 0;
	unsigned int seed = 12345;

	for (int step = 0; step < 200000; step++) {
		seed = seed * 1103515245 + 12345;
		if ((seed >> 16) % 2 && qtail < 4096) {
			int type = (seed >> 20) % 3 ? SH : EX;
			bool fits = qhead == qtail && !held_ex && (type == SH ? true : !held_sh);
			struct urel_osc_lockreq *r = req(type, step);
			int ret = urel_osc_lock_acquire(&lm, r);

			URT_CHECK_EQ(ret, fits ? 1 : 0);
			if (fits) {
				held_sh += type == SH;
				held_ex += type == EX;
				free(r); /* granted now: the manager did not keep it */
			} else {
				qtype[qtail++] = type;
			}
			continue;
		}
		if (!held_sh && !held_ex)
			continue;
		{
			struct urel_osc_lockreq *g;
			int type = held_ex ? EX : SH, want = 0;

			URT_CHECK_EQ(urel_osc_lock_release(&lm, type, &g), 0);
			if (type == EX)
				held_ex--;
			else
				held_sh--;
			if (!held_ex && !held_sh) {
				while (qhead < qtail) {
					if (qtype[qhead] == EX) {
						if (want)
							break;
						held_ex++;
						qhead++;
						want++;
						break;
					}
					held_sh++;
					qhead++;
					want++;
				}
			}
			URT_CHECK_EQ(count(g), want);
		}
		URT_CHECK_EQ(lm.queued, (unsigned int)(qtail - qhead));
		URT_CHECK_EQ(lm.shared, (unsigned int)held_sh);
		if (urt_failures)
			break;
	}
	while (lm.head) {
		struct urel_osc_lockreq *r = lm.head;

		lm.head = r->next;
		free(r);
	}
}

/* An origin's remote compare-and-swap, as the target's kernel applies it. */
static uint64_t remote_cas(uint64_t *word, uint64_t compare, uint64_t swap)
{
	__atomic_compare_exchange_n(word, &compare, swap, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	return compare;
}

#define OWN(r) UREL_OSC_LW_OWNER(r)
#define W UREL_OSC_LW_WAITERS
#define M UREL_OSC_LW_MANAGED
#define RD(r) UREL_OSC_LW_READER(r)

static void check_word_take(void)
{
	uint64_t word = 0;

	URT_CHECK(urel_osc_lw_take(&word));
	URT_CHECK_EQ(word, M);
	URT_CHECK(urel_osc_lw_take(&word)); /* ours already */
	urel_osc_lw_drop(&word);
	URT_CHECK_EQ(word, 0);
	word = OWN(3);
	URT_CHECK(!urel_osc_lw_take(&word));
	URT_CHECK_EQ(word, OWN(3) | W);
	URT_CHECK(!urel_osc_lw_take(&word));
	URT_CHECK_EQ(word, OWN(3) | W);
	urel_osc_lw_drop(&word); /* never frees an origin's word */
	URT_CHECK_EQ(word, OWN(3) | W);
	/* Once marked, the owner's release cannot succeed: it must tell us. */
	URT_CHECK_EQ(remote_cas(&word, OWN(3), 0), OWN(3) | W);
	URT_CHECK(!urel_osc_lw_handoff(&word, 2)); /* not the owner */
	URT_CHECK(urel_osc_lw_handoff(&word, 3));
	URT_CHECK_EQ(word, M);
	URT_CHECK(!urel_osc_lw_handoff(&word, 3)); /* twice */
	/* A remote swap can never take a word the manager holds. */
	URT_CHECK_EQ(remote_cas(&word, 0, OWN(1)), M);
	URT_CHECK_EQ(urel_osc_lw_owner(OWN(0) | W), 0);
	URT_CHECK_EQ(urel_osc_lw_owner(M), -1);
	URT_CHECK_EQ(urel_osc_lw_owner(0), -1);
	word = OWN(4);
	URT_CHECK(!urel_osc_lw_reclaim(&word, 5));
	URT_CHECK(urel_osc_lw_reclaim(&word, 4));
	URT_CHECK_EQ(word, M);
}

static void check_word_fifo(void)
{
	uint64_t word = 0;
	struct urel_osc_lockmgr lm = { .word = &word };
	struct urel_osc_lockreq *s2 = req(SH, 2), *x3 = req(EX, 3), *s4 = req(SH, 4), *g, *gone;

	/* Origin 1 takes the word: the manager is not involved. */
	URT_CHECK_EQ(remote_cas(&word, 0, OWN(1)), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s2), 0); /* queued, word marked */
	URT_CHECK_EQ(word, OWN(1) | W);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	/* A second origin's fast attempt fails and queues behind them. */
	URT_CHECK_EQ(remote_cas(&word, 0, OWN(5)), OWN(1) | W);
	/* Forgetting a waiter grants nothing while origin 1 owns the word. */
	urel_osc_lock_forget(&lm, 9, &gone, &g);
	URT_CHECK(!gone && !g && lm.head == s2);
	/* Origin 1's release finds the mark and tells the manager. */
	URT_CHECK_EQ(remote_cas(&word, OWN(1), 0), OWN(1) | W);
	URT_CHECK_EQ(urel_osc_lock_handoff(&lm, 2, &g), -EINVAL); /* not its owner */
	URT_CHECK(!g && word == (OWN(1) | W));
	URT_CHECK_EQ(urel_osc_lock_handoff(&lm, 1, &g), 0);
	URT_CHECK(g == s2 && !s2->next);
	URT_CHECK_EQ(word, M);
	URT_CHECK_EQ(lm.type, SH);
	/* A shared request never overtakes the queued exclusive one. */
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s4), 0);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(g == x3 && !x3->next);
	URT_CHECK_EQ(word, M);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(g == s4);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g && !lm.type && !lm.head);
	/* All released: the word is free for the fast path again. */
	URT_CHECK_EQ(word, 0);
	URT_CHECK_EQ(remote_cas(&word, 0, OWN(5)), 0);
	/* Owner released before the request arrived: granted at once through the word. */
	URT_CHECK_EQ(remote_cas(&word, OWN(5), 0), OWN(5));
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s2), 1);
	URT_CHECK_EQ(word, M);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK_EQ(word, 0);
	free(s2);
	free(x3);
	free(s4);
}

static void check_word_reclaim(void)
{
	uint64_t word = OWN(6);
	struct urel_osc_lockmgr lm = { .word = &word };
	struct urel_osc_lockreq *x2 = req(EX, 2), *s3 = req(SH, 3), *g, *gone;

	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x2), 0);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s3), 0);
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 5, &g), 0); /* 5 holds nothing */
	URT_CHECK(!g && word == (OWN(6) | W));
	/* The holder died: the word comes back and the head is granted. */
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 6, &g), 1);
	URT_CHECK(g == x2 && word == M && lm.type == EX);
	/* Its late release (a false death) fails and changes nothing. */
	URT_CHECK_EQ(remote_cas(&word, OWN(6), 0), M);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(g == s3);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK_EQ(word, 0);
	/* A dead owner nobody waits for: reclaimed to free. */
	word = OWN(7);
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 7, &g), 1);
	URT_CHECK(!g && word == 0);
	/* Waiters that all went: the owner's release still reaches the manager, which frees it. */
	word = OWN(8);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x2), 0);
	urel_osc_lock_forget(&lm, 2, &gone, &g);
	URT_CHECK(gone == x2 && !g && word == (OWN(8) | W));
	URT_CHECK_EQ(urel_osc_lock_handoff(&lm, 8, &g), 0);
	URT_CHECK(!g && word == 0);
	free(x2);
	free(s3);
}

/*
 * Random mix of fast owners, fast readers and manager requests: the word
 * and the manager always agree (a grant of the manager <=> MANAGED, an
 * owner or readers => nothing granted by it, a queue => the word is not
 * free).
 */
static void check_word_random(void)
{
	uint64_t word = 0;
	struct urel_osc_lockmgr lm = { .word = &word, .reader_bit = RD(40) };
	unsigned int seed = 777, fast_grants = 0, mgr_grants = 0, handoffs = 0, shared = 0,
		     gone = 0;
	int held_sh = 0, held_ex = 0, owner = -1;
	uint64_t readers = 0;

	for (int step = 0; step < 100000 && !urt_failures; step++) {
		unsigned int roll;
		struct urel_osc_lockreq *g = NULL;

		seed = seed * 1103515245 + 12345;
		roll = (seed >> 16) % 10;
		if (roll == 8 && !(readers & RD(step % 8))) {
			/* An origin joins on what it last saw, as fastlock.c does. */
			uint64_t bit = RD(step % 8), v = word;
			uint64_t guess = urel_osc_lw_readers_only(v) ? v : 0;

			if (remote_cas(&word, guess, guess | bit) == guess) {
				readers |= bit;
				shared++;
			}
		} else if (roll == 9 && readers) {
			uint64_t bit = readers & -readers, v = word, to;

			readers &= ~bit;
			if (urel_osc_lw_release_to(v, bit, &to)) {
				URT_CHECK_EQ(remote_cas(&word, v, to), v);
			} else {
				/* The last one out of a marked word: the manager takes its bit. */
				URT_CHECK_EQ(
					urel_osc_lock_readers_gone(&lm, __builtin_ctzll(bit), &g),
					0);
				gone++;
			}
		} else if (roll < 2 && owner < 0) {
			if (remote_cas(&word, 0, OWN(step % 1000)) == 0) {
				owner = step % 1000;
				fast_grants++;
			}
		} else if (roll < 4 && owner >= 0) {
			uint64_t old = remote_cas(&word, OWN(owner), 0);

			if (old != OWN(owner)) {
				URT_CHECK_EQ(old, OWN(owner) | W);
				URT_CHECK_EQ(urel_osc_lock_handoff(&lm, owner, &g), 0);
				handoffs++;
			}
			owner = -1;
		} else if (roll < 5 && lm.queued < 64) {
			struct urel_osc_lockreq *r = req((seed >> 20) % 3 ? SH : EX, step);
			int ret = urel_osc_lock_acquire(&lm, r);

			if (ret == 1) {
				held_sh += r->type == SH;
				held_ex += r->type == EX;
				mgr_grants++;
				free(r);
			}
		} else if (held_sh || held_ex) {
			int type = held_ex ? EX : SH;

			URT_CHECK_EQ(urel_osc_lock_release(&lm, type, &g), 0);
			held_ex -= type == EX;
			held_sh -= type == SH;
		}
		while (g) {
			struct urel_osc_lockreq *next = g->next;

			held_sh += g->type == SH;
			held_ex += g->type == EX;
			mgr_grants++;
			free(g);
			g = next;
		}
		URT_CHECK(held_ex <= 1 && !(held_ex && held_sh));
		URT_CHECK_EQ(lm.type != 0, held_ex || held_sh);
		if (lm.type && !lm.by_bit)
			URT_CHECK_EQ(word, M);
		if (lm.by_bit)
			URT_CHECK(lm.type == SH && (word & RD(40)) &&
				  !(word & (M | UREL_OSC_LW_EXCL)));
		if (owner >= 0)
			URT_CHECK(!lm.type && !readers && (word & ~W) == OWN(owner));
		if (readers)
			URT_CHECK(lm.type != EX && (!lm.type || lm.by_bit) && owner < 0 &&
				  (word & ~(W | RD(40))) == readers);
		if (lm.head)
			URT_CHECK(word != 0);
		if (!lm.type && owner < 0 && !readers)
			URT_CHECK(!lm.head && word == 0); /* nothing held: nobody waits */
	}
	/* Every path and the hand-overs between them were exercised. */
	URT_CHECK(fast_grants > 100 && mgr_grants > 1000 && handoffs > 10);
	URT_CHECK(shared > 100 && gone > 10);
	while (lm.head) {
		struct urel_osc_lockreq *r = lm.head;

		lm.head = r->next;
		free(r);
	}
}

static void check_word_shared(void)
{
	uint64_t word = 0, v;
	struct urel_osc_lockmgr lm = { .word = &word };
	struct urel_osc_lockreq *x3 = req(EX, 3), *s4 = req(SH, 4), *g;

	/* Two readers through the word; the second's first guess was stale. */
	URT_CHECK_EQ(remote_cas(&word, 0, RD(1)), 0);
	URT_CHECK_EQ(remote_cas(&word, 0, RD(2)), RD(1));
	URT_CHECK(urel_osc_lw_readers_only(word));
	URT_CHECK_EQ(remote_cas(&word, RD(1), RD(1) | RD(2)), RD(1));
	URT_CHECK(urel_osc_lw_holds(word, 1) && urel_osc_lw_holds(word, 2));
	URT_CHECK(!urel_osc_lw_holds(word, 3) && urel_osc_lw_owner(word) == -1);
	/* Readers exclude an exclusive origin and the manager's grants. */
	URT_CHECK_EQ(remote_cas(&word, 0, OWN(3)), RD(1) | RD(2));
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK_EQ(word, RD(1) | RD(2) | W);
	/* Marked: no reader may join any more, a shared request queues behind x3. */
	URT_CHECK(!urel_osc_lw_readers_only(word));
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s4), 0);
	/* Reader 1 leaves by its own swap: another remains. */
	URT_CHECK(urel_osc_lw_release_to(RD(1) | RD(2) | W, RD(1), &v));
	URT_CHECK_EQ(remote_cas(&word, RD(1) | RD(2) | W, v), RD(1) | RD(2) | W);
	URT_CHECK(!lm.type && word == (RD(2) | W));
	/* The last reader out leaves its bit in and tells the manager: x3 first. */
	URT_CHECK(!urel_osc_lw_release_to(RD(2) | W, RD(2), &v));
	URT_CHECK_EQ(remote_cas(&word, 0, OWN(5)), RD(2) | W);
	URT_CHECK_EQ(remote_cas(&word, 0, RD(5)), RD(2) | W);
	/* A notice from a rank holding no bit (spoofed, or late) changes nothing. */
	URT_CHECK_EQ(urel_osc_lock_readers_gone(&lm, 1, &g), -EINVAL);
	URT_CHECK(!g && word == (RD(2) | W) && lm.head == x3);
	URT_CHECK_EQ(urel_osc_lock_readers_gone(&lm, 2, &g), 0);
	URT_CHECK(g == x3 && !x3->next && word == M && lm.type == EX);
	URT_CHECK_EQ(urel_osc_lock_readers_gone(&lm, 2, &g), -EINVAL); /* twice */
	URT_CHECK(!g && word == M && lm.type == EX);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(g == s4 && word == M);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g && word == 0);
	/* A dead reader's bit comes back; the others keep theirs and the mark. */
	word = RD(5) | RD(6);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 7, &g), 0);
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 5, &g), 1);
	URT_CHECK(!g && word == (RD(6) | W) && lm.head == x3);
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 6, &g), 1);
	URT_CHECK(g == x3 && word == M && lm.type == EX);
	/* Its late release (a false death) fails and changes nothing. */
	URT_CHECK_EQ(remote_cas(&word, RD(6) | W, W), M);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(!g && word == 0);
	/* The last reader's notice crossing the queue's emptying: its bit still comes out. */
	word = RD(2);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK_EQ(word, RD(2) | W);
	{
		struct urel_osc_lockreq *gone;

		urel_osc_lock_forget(&lm, 3, &gone, &g);
		URT_CHECK(gone == x3 && !g);
	}
	URT_CHECK_EQ(word, RD(2)); /* nobody waits: no mark */
	URT_CHECK_EQ(urel_osc_lock_readers_gone(&lm, 2, &g), 0);
	URT_CHECK(!g && word == 0);
	/* The word holds reader bits only below the limit, and never as an owner. */
	URT_CHECK(!urel_osc_lw_holds(RD(1), UREL_OSC_LW_READERS_MAX));
	URT_CHECK(!urel_osc_lw_holds(OWN(2), 2 + 1) && urel_osc_lw_holds(OWN(2), 2));
	URT_CHECK(!urel_osc_lw_holds(OWN(2) | M, 2));
	free(x3);
	free(s4);
}

/* The manager's own shared grants beside origin readers: by its own bit, never waiting. */
static void check_word_mgr_shared(void)
{
	uint64_t word = RD(1);
	struct urel_osc_lockmgr lm = { .word = &word, .reader_bit = RD(9) };
	struct urel_osc_lockreq *s2 = req(SH, 2), *x3 = req(EX, 3), *s4 = req(SH, 4), *g;

	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s2), 1);
	URT_CHECK(lm.by_bit && word == (RD(1) | RD(9)));
	/* More origins may still join; an exclusive request marks the word. */
	URT_CHECK_EQ(remote_cas(&word, RD(1) | RD(9), RD(1) | RD(5) | RD(9)), RD(1) | RD(9));
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK_EQ(word, RD(1) | RD(5) | RD(9) | W);
	URT_CHECK(!urel_osc_lw_readers_only(word));
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s4), 0); /* behind x3 */
	/* A dead reader's bit comes back beside ours. */
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 5, &g), 1);
	URT_CHECK(!g && word == (RD(1) | RD(9) | W));
	/* Our release first: origin 1 still reads, x3 waits for its notice. */
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g && !lm.by_bit && word == (RD(1) | W));
	URT_CHECK_EQ(urel_osc_lock_readers_gone(&lm, 1, &g), 0);
	URT_CHECK(g == x3 && word == M && lm.type == EX);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(g == s4 && word == M && !lm.by_bit);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g && word == 0);
	/* Free word: the manager holds it as before; readers cannot join it. */
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s2), 1);
	URT_CHECK(!lm.by_bit && word == M);
	URT_CHECK_EQ(remote_cas(&word, 0, RD(1)), M);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK_EQ(word, 0);
	free(s2);
	free(x3);
	free(s4);
}

/*
 * The last reader out of a marked word dies before its notice reaches the
 * manager: its bit, still in the word, names it, so the watch pings it and
 * takes it back, and the queued exclusive request is granted.
 */
static void check_word_dead_last_reader(void)
{
	uint64_t word = RD(1), to;
	struct urel_osc_lockmgr lm = { .word = &word, .reader_bit = RD(9) };
	struct urel_osc_lockreq *x3 = req(EX, 3), *g;

	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK_EQ(word, RD(1) | W);
	/* Reader 1 leaves: no swap of its own, only the notice (lost: it died). */
	URT_CHECK(!urel_osc_lw_release_to(word, RD(1), &to));
	URT_CHECK(urel_osc_lw_holds(word, 1)); /* what the watch pings */
	URT_CHECK_EQ(urel_osc_lock_reclaim(&lm, 1, &g), 1);
	URT_CHECK(g == x3 && word == M && lm.type == EX);
	/* Its notice after all (a false death): refused, nothing changes. */
	URT_CHECK_EQ(urel_osc_lock_readers_gone(&lm, 1, &g), -EINVAL);
	URT_CHECK(!g && word == M && lm.type == EX);
	URT_CHECK_EQ(urel_osc_lock_release(&lm, EX, &g), 0);
	URT_CHECK(!g && word == 0);
	free(x3);
}

/*
 * The only queued request went (its origin died): the mark it left must go
 * too, else shared requests wait for the readers holding the word and no
 * reader may join it.
 */
static void check_word_stale_mark(void)
{
	uint64_t word = RD(1);
	struct urel_osc_lockmgr lm = { .word = &word, .reader_bit = RD(9) };
	struct urel_osc_lockreq *x3 = req(EX, 3), *s4 = req(SH, 4), *gone, *g;

	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK_EQ(word, RD(1) | W);
	urel_osc_lock_forget(&lm, 3, &gone, &g);
	URT_CHECK(gone == x3 && !g && !lm.head);
	URT_CHECK_EQ(word, RD(1));
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, s4), 1); /* beside reader 1 at once */
	URT_CHECK(lm.by_bit && word == (RD(1) | RD(9)));
	URT_CHECK_EQ(remote_cas(&word, RD(1) | RD(9), RD(1) | RD(5) | RD(9)), RD(1) | RD(9));
	/* The same with our own bit in: a waiter that went leaves readers free to join. */
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	URT_CHECK(word & W);
	urel_osc_lock_forget(&lm, 3, &gone, &g);
	URT_CHECK(gone == x3 && !g && word == (RD(1) | RD(5) | RD(9)));
	URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
	URT_CHECK(!g && !lm.by_bit && word == (RD(1) | RD(5)));
	/* An owner's mark stays: its release must still come to us. */
	word = OWN(6);
	URT_CHECK_EQ(urel_osc_lock_acquire(&lm, x3), 0);
	urel_osc_lock_forget(&lm, 3, &gone, &g);
	URT_CHECK(gone == x3 && !g && word == (OWN(6) | W));
	URT_CHECK_EQ(urel_osc_lock_handoff(&lm, 6, &g), 0);
	URT_CHECK(!g && word == 0);
	free(x3);
	free(s4);
}

/*
 * Another thread plays a remote writer taking the last reader bit out of a
 * marked word while the manager releases its own shared hold beside it:
 * however the two interleave, a queued exclusive request keeps the word
 * from being free (else an origin's swap 0 -> OWNER overtakes it).
 */
static uint64_t race_word;
static int race_gen;

static void *race_remote(void *arg)
{
	int seen = 0;

	(void)arg;
	for (;;) {
		int gen;
		uint64_t v = RD(1) | W;

		while ((gen = __atomic_load_n(&race_gen, __ATOMIC_ACQUIRE)) == seen)
			;
		if (gen < 0)
			return NULL;
		seen = gen;
		while (!__atomic_compare_exchange_n(&race_word, &v, W, false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST)) {
			if (!(v & RD(1)))
				break;
			v = RD(1) | W;
		}
	}
}

static void check_word_release_race(void)
{
	pthread_t th;
	long free_with_queue = 0, n = 50000;

	URT_CHECK_EQ(pthread_create(&th, NULL, race_remote, NULL), 0);
	for (long i = 0; i < n && !urt_failures; i++) {
		struct urel_osc_lockmgr lm = { .word = &race_word, .reader_bit = RD(9) };
		struct urel_osc_lockreq s2 = { .type = SH, .origin = 2 },
					x3 = { .type = EX, .origin = 3 }, *g;

		__atomic_store_n(&race_word, RD(1), __ATOMIC_SEQ_CST);
		URT_CHECK_EQ(urel_osc_lock_acquire(&lm, &s2), 1); /* by our bit */
		URT_CHECK_EQ(urel_osc_lock_acquire(&lm, &x3), 0); /* marks the word */
		__atomic_store_n(&race_gen, (int)(i + 1), __ATOMIC_RELEASE);
		URT_CHECK_EQ(urel_osc_lock_release(&lm, SH, &g), 0);
		while (__atomic_load_n(&race_word, __ATOMIC_SEQ_CST) & RD(1))
			;
		if (!g && lm.head == &x3 && !__atomic_load_n(&race_word, __ATOMIC_SEQ_CST))
			free_with_queue++;
	}
	__atomic_store_n(&race_gen, -1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	URT_CHECK_EQ(free_with_queue, 0);
}

int main(void)
{
	check_word_release_race();
	check_word_dead_last_reader();
	check_word_stale_mark();
	check_word_mgr_shared();
	check_word_shared();
	check_word_take();
	check_word_fifo();
	check_word_reclaim();
	check_word_random();
	check_forget();
	check_rules();
	check_random();
	return urt_done("unit_osc_lock");
}
