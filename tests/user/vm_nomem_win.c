// SPDX-License-Identifier: MIT
/*
 * In-VM test: a window target that runs out of memory while it serves. Rank
 * 0 exposes counters and, with about one allocation in four failing in the
 * whole process (its progress thread included), serves two origins that
 * lock it exclusively and shared, fetch-and-add, get-accumulate, accumulate
 * and compare-and-swap. No request may be lost, half applied or answered
 * twice: fetched values are all distinct, the counters end exact, no origin
 * hangs, and the target's counters show deferred requests, none dropped.
 */
#include <stdlib.h>
#include <string.h>

#include <usnicrel_win.h>

#include "urt.h"
#include "urt_job.h"
#include "urt_nomem.h"

#define ORIGINS 2
#define ITERS 60

enum {
	C_EXCL,
	C_ACC,
	C_FAO,
	C_CAS,
	C_NR
};

static void origin(struct urel_win *w, int rank)
{
	uint64_t one = 1, got, seen_excl[ITERS], seen_fao[ITERS];

	for (int i = 0; i < ITERS; i++) {
		uint64_t old, want;

		/* Exclusive: a get-accumulate and a plain accumulate in one epoch. */
		URT_CHECK_EQ(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0), 0);
		URT_CHECK_EQ(urel_win_get_accumulate(w, &one, &got, 1, UREL_WIN_UINT64, 0,
						     C_EXCL * 8, UREL_WIN_SUM),
			     0);
		seen_excl[i] = got;
		URT_CHECK_EQ(urel_win_accumulate(w, &one, 1, UREL_WIN_UINT64, 0, C_ACC * 8,
						 UREL_WIN_SUM),
			     0);
		URT_CHECK_EQ(urel_win_unlock(w, 0), 0);

		/* Shared: fetch-and-add and an increment by compare-and-swap. */
		URT_CHECK_EQ(urel_win_lock(w, UREL_WIN_LOCK_SHARED, 0, 0), 0);
		URT_CHECK_EQ(urel_win_fetch_and_op(w, &one, &got, UREL_WIN_UINT64, 0, C_FAO * 8,
						   UREL_WIN_SUM),
			     0);
		seen_fao[i] = got;
		old = 0;
		for (int tries = 0; tries < 10000; tries++) {
			want = old + 1;
			URT_CHECK_EQ(urel_win_compare_and_swap(w, &want, &old, &got,
							       UREL_WIN_UINT64, 0, C_CAS * 8),
				     0);
			if (got == old)
				break;
			old = got;
		}
		URT_CHECK_EQ(urel_win_unlock(w, 0), 0);
		if (urt_failures) {
			fprintf(stderr, "origin %d: first failure in round %d\n", rank, i);
			return;
		}
	}
	/* Our own fetches of one counter never repeat a value. */
	for (int i = 1; i < ITERS; i++) {
		URT_CHECK(seen_excl[i] > seen_excl[i - 1]);
		URT_CHECK(seen_fao[i] > seen_fao[i - 1]);
	}
}

static void run(struct urt_job *t)
{
	struct urel_win_stats st;
	struct urel_group *world;
	struct urel_win *w;
	struct urel_job *j;
	uint64_t *mem;

	URT_CHECK_EQ(urel_job_init(t->m, t->rank, t->size, t->addr, &j), 0);
	URT_CHECK_EQ(urel_group_world(j, UREL_TAG_FULL, &world), 0);
	URT_CHECK_EQ(urel_win_allocate(world, C_NR * 8, 1, (void **)&mem, &w), 0);
	if (urt_failures)
		exit(1);
	if (t->rank == 0) {
		urt_nomem_seed(7);
		__atomic_store_n(&urt_nomem_armed, 1, __ATOMIC_RELAXED);
		/* Serve (this barrier progresses, and so does the window's thread). */
		urt_job_barrier(t);
		__atomic_store_n(&urt_nomem_armed, 0, __ATOMIC_RELAXED);
		URT_CHECK_EQ(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0), 0);
		URT_CHECK_EQ(mem[C_EXCL], ORIGINS * ITERS);
		URT_CHECK_EQ(mem[C_ACC], ORIGINS * ITERS);
		URT_CHECK_EQ(mem[C_FAO], ORIGINS * ITERS);
		URT_CHECK_EQ(mem[C_CAS], ORIGINS * ITERS);
		URT_CHECK_EQ(urel_win_unlock(w, 0), 0);
		URT_CHECK_EQ(urel_win_stats(w, &st), 0);
		printf("vm_nomem_win: target deferred %llu requests, dropped %llu, %llu "
		       "allocations refused\n",
		       (unsigned long long)st.deferred, (unsigned long long)st.dropped,
		       (unsigned long long)urt_nomem_failed);
		URT_CHECK(st.deferred > 0);
		URT_CHECK_EQ(st.dropped, 0);
	} else {
		origin(w, t->rank);
		urt_job_barrier(t);
	}
	URT_CHECK_EQ(urel_win_free(w), 0);
	URT_CHECK_EQ(urel_group_free(world), 0);
	URT_CHECK_EQ(urel_job_fini(j), 0);
}

int main(void)
{
	urt_job_no_av = true;
	if (urt_job_run(1 + ORIGINS, NULL, run, 500))
		urt_failures++;
	return urt_done("vm_nomem_win");
}
