// SPDX-License-Identifier: MIT
/*
 * MPI program run by tests/user/mpi_urel.sh with Open MPI's osc rdma over
 * btl ofi and the urel provider: one-sided MPI under fence and under
 * passive-target locks (put, get, accumulate with MPI_SUM, fetch_and_op,
 * compare_and_swap on 32- and 64-bit integers), every result checked. Any
 * failure aborts the job.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

static int rank, size;

/* Bytes of the put/get area: several provider pieces. */
#define AREA (600u * 1024 + 77)

/* The window: a byte area, then counters. */
struct win_layout {
	unsigned char area[AREA];
	int32_t acc32;
	int64_t acc64;
	int64_t fop64;
	int32_t cas32;
	int64_t cas64;
	int64_t lock64[64];
};

static unsigned char pattern(int src, int round, size_t i)
{
	return (unsigned char)(src * 29 + round * 11 + i * 7 + (i >> 9));
}

#define DISP(field) ((MPI_Aint)offsetof(struct win_layout, field))

/* Fence: each rank puts a pattern into its right neighbour's area, then gets it back. */
static void test_fence_put_get(MPI_Win win, struct win_layout *w)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	unsigned char *buf = malloc(AREA), *back = malloc(AREA);

	CHECK(buf && back, "malloc");
	for (size_t i = 0; i < AREA; i++)
		buf[i] = pattern(rank, 1, i);
	MPI_Win_fence(0, win);
	MPI_Put(buf, AREA, MPI_BYTE, next, DISP(area), AREA, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	for (size_t i = 0; i < AREA; i++)
		CHECK(w->area[i] == pattern(prev, 1, i), "put: byte %zu from %d is %#x", i, prev,
		      w->area[i]);
	memset(back, 0, AREA);
	MPI_Get(back, AREA, MPI_BYTE, next, DISP(area), AREA, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	for (size_t i = 0; i < AREA; i++)
		CHECK(back[i] == buf[i], "get: byte %zu is %#x, want %#x", i, back[i], buf[i]);
	/* Small unaligned pieces. */
	MPI_Put(buf + 3, 5, MPI_BYTE, next, DISP(area) + 1001, 5, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	for (size_t i = 0; i < 5; i++)
		CHECK(w->area[1001 + i] == pattern(prev, 1, 3 + i), "small put byte %zu", i);
	free(buf);
	free(back);
}

/* Fence: every rank adds to every rank's counters. */
static void test_fence_accumulate(MPI_Win win, struct win_layout *w)
{
	int32_t one32 = rank + 1;
	int64_t one64 = ((int64_t)rank << 33) + 5;
	int64_t want64 = 0;
	int32_t want32 = 0;

	MPI_Win_fence(0, win);
	w->acc32 = -1000;
	w->acc64 = -((int64_t)1 << 40);
	MPI_Win_fence(0, win);
	for (int t = 0; t < size; t++) {
		MPI_Accumulate(&one32, 1, MPI_INT32_T, t, DISP(acc32), 1, MPI_INT32_T, MPI_SUM,
			       win);
		MPI_Accumulate(&one64, 1, MPI_INT64_T, t, DISP(acc64), 1, MPI_INT64_T, MPI_SUM,
			       win);
	}
	MPI_Win_fence(0, win);
	for (int r = 0; r < size; r++) {
		want32 += r + 1;
		want64 += ((int64_t)r << 33) + 5;
	}
	CHECK(w->acc32 == -1000 + want32, "acc32 %d, want %d", w->acc32, -1000 + want32);
	CHECK(w->acc64 == -((int64_t)1 << 40) + want64, "acc64 %lld", (long long)w->acc64);
}

/* Passive target: fetch_and_op on rank 0's counter from every rank; old values all distinct. */
static void test_lock_fetch_and_op(MPI_Win win, struct win_layout *w)
{
	const int rounds = 20;
	int64_t inc = 1, old, mine[20];
	int64_t *all = malloc(sizeof(int64_t) * rounds * (size_t)size);
	char *seen;

	CHECK(all, "malloc");
	if (!rank)
		w->fop64 = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < rounds; i++) {
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Fetch_and_op(&inc, &old, MPI_INT64_T, 0, DISP(fop64), MPI_SUM, win);
		MPI_Win_unlock(0, win);
		mine[i] = old;
	}
	MPI_Allgather(mine, rounds, MPI_INT64_T, all, rounds, MPI_INT64_T, MPI_COMM_WORLD);
	seen = calloc((size_t)rounds * (size_t)size, 1);
	CHECK(seen, "calloc");
	for (int i = 0; i < rounds * size; i++) {
		CHECK(all[i] >= 0 && all[i] < rounds * size && !seen[all[i]],
		      "fetch_and_op returned %lld twice or out of range", (long long)all[i]);
		seen[all[i]] = 1;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (!rank)
		CHECK(w->fop64 == rounds * size, "fop64 %lld", (long long)w->fop64);
	/* MPI_NO_OP reads, MPI_REPLACE swaps. */
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
	MPI_Fetch_and_op(NULL, &old, MPI_INT64_T, 0, DISP(fop64), MPI_NO_OP, win);
	MPI_Win_flush(0, win);
	CHECK(old >= rounds * size, "no-op read %lld", (long long)old);
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	free(all);
	free(seen);
}

/*
 * Passive target: compare_and_swap on the right neighbour's counters (the
 * only rank that touches them): a compare that misses, then two that hit.
 * Not on oneself: Open MPI 4.1.4 crashes there, in mca_btl_ofi_acswap, on a
 * NULL registration handle (its bug; tests/mpi/mpi_atomic_self.c says why
 * and covers compare-and-swap to oneself where Open MPI can do it).
 */
static void test_lock_cas(MPI_Win win, struct win_layout *w)
{
	int target = (rank + 1) % size, prev = (rank + size - 1) % size;
	int64_t v64, cmp64, res64 = 0, tag64 = ((int64_t)rank + 1) << 35;
	int32_t v32, cmp32, res32 = 0, tag32 = (rank + 1) * 1000;

	w->cas32 = -1;
	w->cas64 = -1;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
	cmp64 = 12345;
	v64 = 777;
	MPI_Compare_and_swap(&v64, &cmp64, &res64, MPI_INT64_T, target, DISP(cas64), win);
	MPI_Win_flush(target, win);
	CHECK(res64 == -1, "cas64 miss read %lld", (long long)res64);
	cmp32 = 12345;
	v32 = 777;
	MPI_Compare_and_swap(&v32, &cmp32, &res32, MPI_INT32_T, target, DISP(cas32), win);
	MPI_Win_flush(target, win);
	CHECK(res32 == -1, "cas32 miss read %d", res32);
	MPI_Win_unlock(target, win);

	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
	cmp64 = -1;
	v64 = tag64;
	MPI_Compare_and_swap(&v64, &cmp64, &res64, MPI_INT64_T, target, DISP(cas64), win);
	MPI_Win_flush(target, win);
	CHECK(res64 == -1, "cas64 hit read %lld", (long long)res64);
	cmp64 = tag64;
	v64 = tag64 + 1;
	MPI_Compare_and_swap(&v64, &cmp64, &res64, MPI_INT64_T, target, DISP(cas64), win);
	MPI_Win_flush(target, win);
	CHECK(res64 == tag64, "cas64 second hit read %lld", (long long)res64);
	cmp32 = -1;
	v32 = tag32;
	MPI_Compare_and_swap(&v32, &cmp32, &res32, MPI_INT32_T, target, DISP(cas32), win);
	MPI_Win_flush(target, win);
	CHECK(res32 == -1, "cas32 hit read %d", res32);
	cmp32 = tag32;
	v32 = tag32 + 1;
	MPI_Compare_and_swap(&v32, &cmp32, &res32, MPI_INT32_T, target, DISP(cas32), win);
	MPI_Win_unlock(target, win);
	CHECK(res32 == tag32, "cas32 second hit read %d", res32);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(w->cas64 == (((int64_t)prev + 1) << 35) + 1, "cas64 end %lld", (long long)w->cas64);
	CHECK(w->cas32 == (prev + 1) * 1000 + 1, "cas32 end %d", w->cas32);
}

/* Passive target: put and get under an exclusive lock, then lock_all and accumulate. */
static void test_lock_put_get(MPI_Win win, struct win_layout *w)
{
	int target = (rank + 1) % size;
	int64_t vals[64], back[64], one = 1;

	for (int i = 0; i < 64; i++)
		vals[i] = ((int64_t)rank << 40) + i * 3;
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
	MPI_Put(vals, 64, MPI_INT64_T, target, DISP(lock64), 64, MPI_INT64_T, win);
	MPI_Win_flush(target, win);
	memset(back, 0, sizeof(back));
	MPI_Get(back, 64, MPI_INT64_T, target, DISP(lock64), 64, MPI_INT64_T, win);
	MPI_Win_unlock(target, win);
	for (int i = 0; i < 64; i++)
		CHECK(back[i] == vals[i], "lock get %d: %lld", i, (long long)back[i]);
	MPI_Barrier(MPI_COMM_WORLD);
	/* Every rank adds 1 to element 0 of every rank, under lock_all. */
	MPI_Win_lock_all(0, win);
	for (int t = 0; t < size; t++)
		MPI_Accumulate(&one, 1, MPI_INT64_T, t, DISP(lock64), 1, MPI_INT64_T, MPI_SUM, win);
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	{
		int prev = (rank + size - 1) % size;

		CHECK(w->lock64[0] == ((int64_t)prev << 40) + size, "lock_all sum %lld",
		      (long long)w->lock64[0]);
		for (int i = 1; i < 64; i++)
			CHECK(w->lock64[i] == ((int64_t)prev << 40) + i * 3, "lock64[%d]", i);
	}
}

int main(int argc, char **argv)
{
	struct win_layout *w;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* User memory: osc rdma registers it through the btl (fi_mr_reg). */
	w = calloc(1, sizeof(*w));
	CHECK(w, "calloc");
	CHECK(MPI_Win_create(w, sizeof(*w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS,
	      "MPI_Win_create");
	MPI_Barrier(MPI_COMM_WORLD);
	test_fence_put_get(win, w);
	test_fence_accumulate(win, w);
	MPI_Win_fence(0, win);
	test_lock_fetch_and_op(win, w);
	test_lock_cas(win, w);
	test_lock_put_get(win, w);
	MPI_Win_free(&win);
	free(w);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!rank)
		printf("mpi_onesided: %d ranks ok\n", size);
	MPI_Finalize();
	return 0;
}
