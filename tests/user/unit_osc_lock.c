// SPDX-License-Identifier: MIT
/*
 * Host unit test of the window lock manager alone (lib/osc/lockmgr.c):
 * shared locks share, exclusive ones exclude, the queue is FIFO, a shared
 * request never overtakes a queued exclusive one, a release grants one
 * exclusive or a run of shared requests; bad releases change nothing. A
 * random run is checked against a model of the same rules.
 */
#include <errno.h>
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

int main(void)
{
	check_forget();
	check_rules();
	check_random();
	return urt_done("unit_osc_lock");
}
