// SPDX-License-Identifier: MIT
/*
 * MPI program run by tests/user/mpi_urel.sh with Open MPI's osc rdma over
 * btl ofi and the urel provider: MPI_Compare_and_swap and MPI_Fetch_and_op
 * (MPI_SUM, MPI_REPLACE, MPI_NO_OP) on 32- and 64-bit integers, each rank
 * targeting its own window first and then every other rank's, under fence,
 * exclusive and shared locks and lock_all, on windows of MPI_Win_create
 * (malloc'd and MPI_Alloc_mem'd memory), MPI_Win_allocate and
 * MPI_Win_create_dynamic. Each origin owns one slot per target, so every
 * fetched value and every final value is known; any mismatch aborts.
 *
 * Open MPI 4.1.4's osc rdma crashes (NULL dereference in mca_btl_ofi_acswap,
 * before the provider is called) on a compare-and-swap to a peer whose
 * window it reaches with CPU atomics, that is when all ranks share a node:
 * its compare_and_swap tries the btl's atomic before it checks for such a
 * peer, whose registration handle it never set (fetch_and_op checks first).
 * Those compare-and-swaps are replaced by MPI_REPLACE unless -b is given;
 * the dynamic window, whose regions carry handles, does them all, through
 * the provider to the rank's own address. README, provider section, has more.
 *
 *   mpi_atomic_self [-b] [-f FLAVORS]   FLAVORS: letters of c (malloc),
 *                                       m (MPI_Alloc_mem), a (allocate),
 *                                       d (dynamic); default cmad
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"

static int rank, size;

#define MAX_RANKS 16

/* One slot per origin rank in every window. */
struct win_layout {
	int64_t s64[MAX_RANKS];
	int32_t s32[MAX_RANKS];
};

enum flavor {
	CREATE,
	ALLOC_MEM,
	ALLOCATE,
	DYNAMIC,
	NFLAVORS
};

static const char flavor_letter[NFLAVORS] = { 'c', 'm', 'a', 'd' };

/* The window of each target: its base address for a dynamic window, else 0. */
static MPI_Aint base_of[MAX_RANKS];
static enum flavor flavor;
static bool known_bug;

#define DISP64(t, r)                                                                               \
	(base_of[t] + (MPI_Aint)(offsetof(struct win_layout, s64) + (size_t)(r) * sizeof(int64_t)))
#define DISP32(t, r)                                                                               \
	(base_of[t] + (MPI_Aint)(offsetof(struct win_layout, s32) + (size_t)(r) * sizeof(int32_t)))

/* Whether a compare-and-swap to @t avoids Open MPI 4.1.4's crash (see the top). */
static bool cas_ok(int t)
{
	if (known_bug || flavor == DYNAMIC)
		return true;
	return t != rank && flavor != ALLOCATE;
}

enum epoch {
	FENCE,
	LOCK_EXCLUSIVE,
	LOCK_SHARED,
	LOCK_ALL,
	NEPOCHS
};

static const char *const epoch_name[NEPOCHS] = { "fence", "lock exclusive", "lock shared",
						 "lock_all" };

/* Values no other (origin, target, epoch) uses: a stale result cannot pass. */
static int64_t val64(int origin, int target, int e, int step)
{
	return ((int64_t)(origin + 1) << 40) + ((int64_t)(target + 1) << 24) + e * 256 + step;
}

static int32_t val32(int origin, int target, int e, int step)
{
	return (origin + 1) * 1000000 + (target + 1) * 10000 + e * 100 + step;
}

/* Completes what was issued to @t when the epoch allows it; a fence completes at its end. */
static void flush(MPI_Win win, enum epoch e, int t)
{
	if (e != FENCE)
		MPI_Win_flush(t, win);
}

/* The sequence on @t's slot of this rank; returns only when every fetched value matched. */
static void atomics_on(MPI_Win win, enum epoch e, int t)
{
	int64_t v64, c64, r64 = 0, old64 = -1;
	int32_t v32, c32, r32 = 0, old32 = -1;

	/* A compare that misses leaves the value. */
	c64 = 12345;
	v64 = val64(rank, t, e, 1);
	c32 = 12345;
	v32 = val32(rank, t, e, 1);
	if (cas_ok(t)) {
		MPI_Compare_and_swap(&v32, &c32, &r32, MPI_INT32_T, t, DISP32(t, rank), win);
		MPI_Compare_and_swap(&v64, &c64, &r64, MPI_INT64_T, t, DISP64(t, rank), win);
		flush(win, e, t);
		if (e != FENCE) {
			CHECK(r64 == old64, "%s to %d: cas64 miss read %lld", epoch_name[e], t,
			      (long long)r64);
			CHECK(r32 == old32, "%s to %d: cas32 miss read %d", epoch_name[e], t, r32);
		}
	}
	/* A compare that hits (where Open MPI would crash: a swap, with the same answer). */
	c64 = old64;
	c32 = old32;
	if (cas_ok(t)) {
		MPI_Compare_and_swap(&v32, &c32, &r32, MPI_INT32_T, t, DISP32(t, rank), win);
		MPI_Compare_and_swap(&v64, &c64, &r64, MPI_INT64_T, t, DISP64(t, rank), win);
	} else {
		MPI_Fetch_and_op(&v32, &r32, MPI_INT32_T, t, DISP32(t, rank), MPI_REPLACE, win);
		MPI_Fetch_and_op(&v64, &r64, MPI_INT64_T, t, DISP64(t, rank), MPI_REPLACE, win);
	}
	flush(win, e, t);
	if (e != FENCE) {
		CHECK(r64 == old64, "%s to %d: cas64 hit read %lld", epoch_name[e], t,
		      (long long)r64);
		CHECK(r32 == old32, "%s to %d: cas32 hit read %d", epoch_name[e], t, r32);
	}
	old64 = v64;
	old32 = v32;
	/* Fetch-and-add, then replace, then a read. */
	v64 = 5;
	MPI_Fetch_and_op(&v64, &r64, MPI_INT64_T, t, DISP64(t, rank), MPI_SUM, win);
	v32 = 7;
	MPI_Fetch_and_op(&v32, &r32, MPI_INT32_T, t, DISP32(t, rank), MPI_SUM, win);
	flush(win, e, t);
	if (e != FENCE) {
		CHECK(r64 == old64, "%s to %d: fop64 sum read %lld", epoch_name[e], t,
		      (long long)r64);
		CHECK(r32 == old32, "%s to %d: fop32 sum read %d", epoch_name[e], t, r32);
	}
	old64 += 5;
	old32 += 7;
	v64 = val64(rank, t, e, 2);
	MPI_Fetch_and_op(&v64, &r64, MPI_INT64_T, t, DISP64(t, rank), MPI_REPLACE, win);
	v32 = val32(rank, t, e, 2);
	MPI_Fetch_and_op(&v32, &r32, MPI_INT32_T, t, DISP32(t, rank), MPI_REPLACE, win);
	flush(win, e, t);
	if (e != FENCE) {
		CHECK(r64 == old64, "%s to %d: fop64 replace read %lld", epoch_name[e], t,
		      (long long)r64);
		CHECK(r32 == old32, "%s to %d: fop32 replace read %d", epoch_name[e], t, r32);
	}
	old64 = v64;
	old32 = v32;
	MPI_Fetch_and_op(NULL, &r64, MPI_INT64_T, t, DISP64(t, rank), MPI_NO_OP, win);
	MPI_Fetch_and_op(NULL, &r32, MPI_INT32_T, t, DISP32(t, rank), MPI_NO_OP, win);
	flush(win, e, t);
	if (e != FENCE) {
		CHECK(r64 == old64, "%s to %d: fop64 read %lld", epoch_name[e], t, (long long)r64);
		CHECK(r32 == old32, "%s to %d: fop32 read %d", epoch_name[e], t, r32);
	}
}

/* Under a fence only the last read is checked, after the closing fence. */
static void fence_epoch(MPI_Win win, int t)
{
	int64_t r64 = 0;
	int32_t r32 = 0;

	MPI_Win_fence(0, win);
	atomics_on(win, FENCE, t);
	MPI_Fetch_and_op(NULL, &r64, MPI_INT64_T, t, DISP64(t, rank), MPI_NO_OP, win);
	MPI_Fetch_and_op(NULL, &r32, MPI_INT32_T, t, DISP32(t, rank), MPI_NO_OP, win);
	MPI_Win_fence(0, win);
	CHECK(r64 == val64(rank, t, FENCE, 2), "fence to %d: final read %lld", t, (long long)r64);
	CHECK(r32 == val32(rank, t, FENCE, 2), "fence to %d: final read %d", t, r32);
}

static void run_epoch(MPI_Win win, struct win_layout *w, enum epoch e)
{
	for (int r = 0; r < MAX_RANKS; r++) {
		w->s64[r] = -1;
		w->s32[r] = -1;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* Oneself first, then the others in turn (with -b oneself last, each step told). */
	for (int i = 0; i < size; i++) {
		int t = (rank + i + known_bug) % size;

		if (known_bug)
			fprintf(stderr, "rank %d: window %c, %s, to %d\n", rank,
				flavor_letter[flavor], epoch_name[e], t);

		switch (e) {
		case FENCE:
			/* Collective: every rank targets its i-th neighbour in this epoch. */
			fence_epoch(win, t);
			break;
		case LOCK_EXCLUSIVE:
		case LOCK_SHARED:
			MPI_Win_lock(e == LOCK_EXCLUSIVE ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t,
				     0, win);
			atomics_on(win, e, t);
			MPI_Win_unlock(t, win);
			break;
		case LOCK_ALL:
			MPI_Win_lock_all(0, win);
			atomics_on(win, e, t);
			MPI_Win_unlock_all(win);
			break;
		default:
			break;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < size; r++) {
		CHECK(w->s64[r] == val64(r, rank, e, 2), "%s: slot64 of %d is %lld", epoch_name[e],
		      r, (long long)w->s64[r]);
		CHECK(w->s32[r] == val32(r, rank, e, 2), "%s: slot32 of %d is %d", epoch_name[e], r,
		      w->s32[r]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* A window of @f over *@w (allocated here for every flavor but ALLOCATE's). */
static MPI_Win open_window(enum flavor f, struct win_layout **w)
{
	MPI_Aint mine;
	MPI_Win win;

	if (f == ALLOCATE) {
		CHECK(MPI_Win_allocate(sizeof(**w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, w, &win) ==
			      MPI_SUCCESS,
		      "MPI_Win_allocate");
		return win;
	}
	if (f == ALLOC_MEM)
		CHECK(MPI_Alloc_mem(sizeof(**w), MPI_INFO_NULL, w) == MPI_SUCCESS, "MPI_Alloc_mem");
	else
		CHECK((*w = malloc(sizeof(**w))), "malloc");
	if (f != DYNAMIC) {
		CHECK(MPI_Win_create(*w, sizeof(**w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) ==
			      MPI_SUCCESS,
		      "MPI_Win_create");
		return win;
	}
	CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS,
	      "MPI_Win_create_dynamic");
	CHECK(MPI_Win_attach(win, *w, sizeof(**w)) == MPI_SUCCESS, "MPI_Win_attach");
	MPI_Get_address(*w, &mine);
	MPI_Allgather(&mine, 1, MPI_AINT, base_of, 1, MPI_AINT, MPI_COMM_WORLD);
	return win;
}

static void close_window(enum flavor f, MPI_Win win, struct win_layout *w)
{
	if (f == DYNAMIC)
		MPI_Win_detach(win, w);
	MPI_Win_free(&win);
	if (f == ALLOC_MEM)
		MPI_Free_mem(w);
	else if (f != ALLOCATE)
		free(w);
	memset(base_of, 0, sizeof(base_of));
}

int main(int argc, char **argv)
{
	const char *flavors = "cmad";
	int opt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size <= MAX_RANKS, "at most %d ranks", MAX_RANKS);
	while ((opt = getopt(argc, argv, "bf:")) != -1) {
		if (opt == 'b')
			known_bug = true;
		else if (opt == 'f')
			flavors = optarg;
		else
			CHECK(0, "usage: %s [-b] [-f cmad]", argv[0]);
	}
	for (flavor = 0; flavor < NFLAVORS; flavor++) {
		struct win_layout *w;
		MPI_Win win;

		if (!strchr(flavors, flavor_letter[flavor]))
			continue;
		win = open_window(flavor, &w);
		for (enum epoch e = 0; e < NEPOCHS; e++)
			run_epoch(win, w, e);
		close_window(flavor, win, w);
		if (!rank)
			printf("mpi_atomic_self: window %c ok\n", flavor_letter[flavor]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (!rank)
		printf("mpi_atomic_self: %d ranks ok\n", size);
	MPI_Finalize();
	return 0;
}
