/* SPDX-License-Identifier: MIT */
/*
 * bench/osc_bench.c's measurements over MPI's one-sided operations (Open
 * MPI over TCP in make bench), with its output lines (impl=ompi):
 *
 *   mpirun -np 2 osc_mpi lat [ITERS]
 *   mpirun -np N osc_mpi counter [ITERS]
 *
 * Each operation is followed by MPI_Win_flush inside one MPI_Win_lock_all
 * epoch, as there; there is no core put to compare with.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BW_SIZE 65536
#define BURST 16
#define LAT_BLOCKS 10

static int rank, nranks;

#define CALL(x)                                                                                    \
	do {                                                                                       \
		int e_ = (x);                                                                      \
		if (e_ != MPI_SUCCESS) {                                                           \
			fprintf(stderr, "osc_mpi: rank %d: line %d: error %d\n", rank, __LINE__,   \
				e_);                                                               \
			MPI_Abort(MPI_COMM_WORLD, 1);                                              \
		}                                                                                  \
	} while (0)

enum op {
	OP_PUT,
	OP_GET,
	OP_ACC,
	OP_FOP,
	OP_LOCK,
	OP_LOCK_PUT
};
static const char *const op_name[] = {
	"put", "get", "acc", "fop", "lock_unlock", "lock_put_unlock"
};

static void one(MPI_Win w, enum op op)
{
	uint64_t v = 1, r;

	switch (op) {
	case OP_PUT:
		CALL(MPI_Put(&v, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w));
		break;
	case OP_GET:
		CALL(MPI_Get(&r, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w));
		break;
	case OP_ACC:
		CALL(MPI_Accumulate(&v, 1, MPI_UINT64_T, 1, 8, 1, MPI_UINT64_T, MPI_SUM, w));
		break;
	case OP_FOP:
		CALL(MPI_Fetch_and_op(&v, &r, MPI_UINT64_T, 1, 16, MPI_SUM, w));
		break;
	case OP_LOCK:
	case OP_LOCK_PUT:
		CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w));
		if (op == OP_LOCK_PUT)
			CALL(MPI_Put(&v, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w));
		CALL(MPI_Win_unlock(1, w));
		return;
	}
	CALL(MPI_Win_flush(1, w));
}

/* @n of @op, in a lock_all epoch when it is a single operation; the time taken. */
static double lat_block(MPI_Win w, enum op op, int n)
{
	int in_all = op < OP_LOCK;
	double t0;

	if (in_all) {
		CALL(MPI_Win_lock_all(0, w));
		one(w, op); /* unmeasured: a lazy lock is taken here */
	}
	t0 = MPI_Wtime();
	for (int i = 0; i < n; i++)
		one(w, op);
	t0 = MPI_Wtime() - t0;
	if (in_all)
		CALL(MPI_Win_unlock_all(w));
	return t0;
}

/* Interleaved blocks after an unmeasured turn, as osc_bench does. */
static void lat(MPI_Win w, int iters)
{
	double sum[OP_LOCK_PUT + 1] = { 0 };

	for (int b = -1; b < LAT_BLOCKS; b++) {
		for (enum op op = OP_PUT; op <= OP_LOCK_PUT; op++) {
			double t = lat_block(w, op, iters / LAT_BLOCKS);

			if (b >= 0)
				sum[op] += t;
		}
	}
	for (enum op op = OP_PUT; op <= OP_LOCK_PUT; op++)
		printf("osc_bench impl=ompi op=%s size=8 lat_us=%.2f\n", op_name[op],
		       sum[op] * 1e6 / (iters / LAT_BLOCKS * LAT_BLOCKS));
}

static void put_bw(MPI_Win w, void *buf, int bursts)
{
	double t0 = 0;

	CALL(MPI_Win_lock_all(0, w));
	for (int b = -1; b < bursts; b++) {
		if (!b)
			t0 = MPI_Wtime();
		for (int i = 0; i < BURST; i++)
			CALL(MPI_Put(buf, BW_SIZE, MPI_BYTE, 1, (MPI_Aint)i * BW_SIZE, BW_SIZE,
				     MPI_BYTE, w));
		CALL(MPI_Win_flush(1, w));
	}
	printf("osc_bench impl=ompi op=put_bw size=%d MBps=%.2f\n", BW_SIZE,
	       (double)bursts * BURST * BW_SIZE / ((MPI_Wtime() - t0) * 1e6));
	CALL(MPI_Win_unlock_all(w));
}

static void counter(int iters)
{
	uint64_t *mem, one_ = 1, r, got;
	double t0;
	MPI_Win w;

	CALL(MPI_Win_allocate(8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
	CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w));
	*mem = 0;
	CALL(MPI_Win_unlock(rank, w));
	CALL(MPI_Barrier(MPI_COMM_WORLD));
	t0 = MPI_Wtime();
	if (rank) {
		CALL(MPI_Win_lock_all(0, w));
		for (int i = 0; i < iters; i++) {
			CALL(MPI_Fetch_and_op(&one_, &r, MPI_UINT64_T, 0, 0, MPI_SUM, w));
			CALL(MPI_Win_flush(0, w));
		}
		CALL(MPI_Win_unlock_all(w));
	}
	CALL(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		double us = (MPI_Wtime() - t0) * 1e6;
		uint64_t want = (uint64_t)iters * (uint64_t)(nranks - 1);

		CALL(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w));
		got = *mem;
		CALL(MPI_Win_unlock(0, w));
		if (got != want) {
			fprintf(stderr, "osc_mpi: counter %llu, want %llu\n",
				(unsigned long long)got, (unsigned long long)want);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		printf("osc_bench impl=ompi op=counter np=%d kops=%.3f\n", nranks,
		       (double)want / us * 1e3);
	}
	CALL(MPI_Win_free(&w));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "lat";
	int iters = argc > 2 ? atoi(argv[2]) : 200;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (iters < 10 || (strcmp(mode, "lat") && strcmp(mode, "counter")) ||
	    (!strcmp(mode, "lat") && nranks != 2)) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N osc_mpi lat|counter [ITERS >= 10] "
					"(lat: 2 ranks)\n");
		MPI_Finalize();
		return 2;
	}
	if (!strcmp(mode, "counter")) {
		counter(iters);
	} else {
		void *mem, *buf = malloc((size_t)BURST * BW_SIZE);
		MPI_Win w;

		if (!buf)
			MPI_Abort(MPI_COMM_WORLD, 1);
		memset(buf, 0x5a, (size_t)BURST * BW_SIZE);
		CALL(MPI_Win_allocate((MPI_Aint)BURST * BW_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
				      &mem, &w));
		if (rank == 0) {
			lat(w, iters);
			put_bw(w, buf, iters / 10);
		}
		CALL(MPI_Barrier(MPI_COMM_WORLD));
		CALL(MPI_Win_free(&w));
		free(buf);
	}
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
