// SPDX-License-Identifier: MIT
/*
 * MPI program run by tests/user/mpi_urel.sh over Open MPI's OFI MTL and the
 * urel provider: two-sided MPI (blocking, non-blocking, wildcards, probe and
 * matched probe, synchronous sends, cancel, truncation, large messages,
 * messages to oneself, a collective), each result checked. Any failure
 * aborts the job. With the argument "big", also messages far above an
 * unprivileged user's RLIMIT_MEMLOCK (64 MiB, and 16 MiB ones in flight at
 * once), which the library's rendezvous registers piecewise.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

static int rank, size;

static unsigned char pattern(int src, int tag, size_t i)
{
	return (unsigned char)(src * 31 + tag * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, size_t n, int src, int tag)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pattern(src, tag, i);
}

static void verify(const unsigned char *b, size_t n, int src, int tag)
{
	for (size_t i = 0; i < n; i++)
		CHECK(b[i] == pattern(src, tag, i), "byte %zu of %zu from %d tag %d wrong", i, n,
		      src, tag);
}

/* Blocking ring: every size class (tiny, eager, rendezvous) around all ranks. */
static void test_ring(void)
{
	static const size_t sizes[] = { 0, 1, 255, 4096, 16384, 16385, 100000, 4u << 20 };
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		unsigned char *out = malloc(n + 1), *in = malloc(n + 1);
		MPI_Status st;
		int count;

		CHECK(out && in, "malloc");
		fill(out, n, rank, (int)k);
		memset(in, 0, n + 1);
		MPI_Sendrecv(out, (int)n, MPI_BYTE, next, (int)k, in, (int)n, MPI_BYTE, prev,
			     (int)k, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		CHECK((size_t)count == n && st.MPI_SOURCE == prev && st.MPI_TAG == (int)k,
		      "size %zu: count %d source %d tag %d", n, count, st.MPI_SOURCE, st.MPI_TAG);
		verify(in, n, prev, (int)k);
		free(out);
		free(in);
	}
}

/* Non-blocking: many messages per pair in flight, receives posted in reverse tag order. */
static void test_nonblocking(void)
{
	enum {
		N = 16,
		LEN = 3000
	};
	MPI_Request *req = malloc(sizeof(*req) * 2 * N * size);
	unsigned char *out = malloc((size_t)N * size * LEN), *in = malloc((size_t)N * size * LEN);
	int nr = 0;

	CHECK(req && out && in, "malloc");
	for (int p = 0; p < size; p++) {
		for (int t = N - 1; t >= 0; t--)
			MPI_Irecv(in + ((size_t)p * N + t) * LEN, LEN, MPI_BYTE, p, 100 + t,
				  MPI_COMM_WORLD, &req[nr++]);
	}
	for (int p = 0; p < size; p++) {
		for (int t = 0; t < N; t++) {
			unsigned char *b = out + ((size_t)p * N + t) * LEN;

			fill(b, LEN, rank, 100 + t);
			MPI_Isend(b, LEN, MPI_BYTE, p, 100 + t, MPI_COMM_WORLD, &req[nr++]);
		}
	}
	MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
	for (int p = 0; p < size; p++) {
		for (int t = 0; t < N; t++)
			verify(in + ((size_t)p * N + t) * LEN, LEN, p, 100 + t);
	}
	free(req);
	free(out);
	free(in);
}

/* Wildcards: rank 0 takes one message from every other rank with ANY_SOURCE/ANY_TAG. */
static void test_wildcards(void)
{
	int seen[64] = { 0 };

	if (rank) {
		int v = rank * 1000;

		MPI_Send(&v, 1, MPI_INT, 0, 200 + rank, MPI_COMM_WORLD);
		return;
	}
	for (int i = 1; i < size; i++) {
		MPI_Status st;
		int v;

		MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < size &&
			      st.MPI_TAG == 200 + st.MPI_SOURCE && v == st.MPI_SOURCE * 1000 &&
			      !seen[st.MPI_SOURCE],
		      "source %d tag %d value %d", st.MPI_SOURCE, st.MPI_TAG, v);
		seen[st.MPI_SOURCE] = 1;
	}
}

/* Probe, then receive a message of the probed size; matched probe (blocking and not). */
static void test_probe(void)
{
	if (rank == 1) {
		unsigned char b[5000];

		fill(b, 1234, 1, 300);
		MPI_Send(b, 1234, MPI_BYTE, 0, 300, MPI_COMM_WORLD);
		fill(b, 4321, 1, 301);
		MPI_Send(b, 4321, MPI_BYTE, 0, 301, MPI_COMM_WORLD);
		fill(b, 77, 1, 302);
		MPI_Send(b, 77, MPI_BYTE, 0, 302, MPI_COMM_WORLD);
	} else if (rank == 0) {
		unsigned char b[5000];
		MPI_Message msg;
		MPI_Request r;
		MPI_Status st;
		int count, flag = 0;

		MPI_Probe(1, 300, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		CHECK(count == 1234 && st.MPI_SOURCE == 1, "probe count %d", count);
		MPI_Recv(b, count, MPI_BYTE, 1, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		verify(b, 1234, 1, 300);

		MPI_Mprobe(MPI_ANY_SOURCE, 301, MPI_COMM_WORLD, &msg, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		CHECK(count == 4321 && st.MPI_SOURCE == 1, "mprobe count %d", count);
		/* The matched message is ours alone: a plain receive must not take it. */
		MPI_Iprobe(1, 301, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		CHECK(!flag, "a claimed message is still visible to iprobe");
		MPI_Mrecv(b, count, MPI_BYTE, &msg, &st);
		verify(b, 4321, 1, 301);

		while (!flag)
			MPI_Improbe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		CHECK(count == 77 && st.MPI_TAG == 302, "improbe count %d tag %d", count,
		      st.MPI_TAG);
		MPI_Imrecv(b, count, MPI_BYTE, &msg, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		verify(b, 77, 1, 302);
	}
}

/*
 * Synchronous send: it must not complete before the receiver matches it, and
 * the receiver posts only after a second message says so.
 */
static void test_ssend(void)
{
	if (rank == 0) {
		int v = 42, go = 1, flag = 0;
		MPI_Request r;

		MPI_Issend(&v, 1, MPI_INT, 1, 400, MPI_COMM_WORLD, &r);
		for (int i = 0; i < 2000 && !flag; i++)
			MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		CHECK(!flag, "synchronous send completed before its receive was posted");
		MPI_Send(&go, 1, MPI_INT, 1, 401, MPI_COMM_WORLD);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		/* And a large one, through rendezvous. */
		unsigned char *b = malloc(1 << 20);

		CHECK(b, "malloc");
		fill(b, 1 << 20, 0, 402);
		MPI_Ssend(b, 1 << 20, MPI_BYTE, 1, 402, MPI_COMM_WORLD);
		free(b);
	} else if (rank == 1) {
		int v = 0, go = 0;
		unsigned char *b = malloc(1 << 20);

		CHECK(b, "malloc");
		MPI_Recv(&go, 1, MPI_INT, 0, 401, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&v, 1, MPI_INT, 0, 400, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(v == 42 && go == 1, "ssend value %d", v);
		MPI_Recv(b, 1 << 20, MPI_BYTE, 0, 402, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		verify(b, 1 << 20, 0, 402);
		free(b);
	}
}

/* A receive nobody sends to is cancelled; a too-small buffer reports truncation. */
static void test_cancel_truncate(void)
{
	MPI_Request r;
	MPI_Status st;
	int v, cancelled = 0;

	MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
	MPI_Cancel(&r);
	MPI_Wait(&r, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(cancelled, "receive not cancelled");

	if (rank == 1) {
		int big[100] = { 0 };

		MPI_Send(big, 100, MPI_INT, 0, 500, MPI_COMM_WORLD);
	} else if (rank == 0) {
		int small[10], err, cls;

		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		err = MPI_Recv(small, 10, MPI_INT, 1, 500, MPI_COMM_WORLD, &st);
		MPI_Error_class(err, &cls);
		CHECK(cls == MPI_ERR_TRUNCATE, "truncation reported as class %d", cls);
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	}
}

/*
 * To oneself: the OFI MTL hands these to the provider with the rank's own
 * address (tiny, eager, rendezvous; unexpected and expected; synchronous).
 */
static void test_self(void)
{
	static const size_t sizes[] = { 0, 100, 20000, 1u << 20 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		unsigned char *out = malloc(n + 1), *in = malloc(n + 1);
		MPI_Request r;
		MPI_Status st;
		int count;

		CHECK(out && in, "malloc");
		fill(out, n, rank, 600 + (int)k);
		/* Unexpected: sent before its receive is posted. */
		MPI_Isend(out, (int)n, MPI_BYTE, rank, 600 + (int)k, MPI_COMM_WORLD, &r);
		memset(in, 0, n + 1);
		MPI_Recv(in, (int)n, MPI_BYTE, rank, 600 + (int)k, MPI_COMM_WORLD, &st);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Get_count(&st, MPI_BYTE, &count);
		CHECK((size_t)count == n && st.MPI_SOURCE == rank, "self %zu: count %d source %d",
		      n, count, st.MPI_SOURCE);
		verify(in, n, rank, 600 + (int)k);
		/* Expected and synchronous: the receive is posted first. */
		memset(in, 0, n + 1);
		MPI_Irecv(in, (int)n, MPI_BYTE, MPI_ANY_SOURCE, 610 + (int)k, MPI_COMM_WORLD, &r);
		fill(out, n, rank, 610 + (int)k);
		MPI_Ssend(out, (int)n, MPI_BYTE, rank, 610 + (int)k, MPI_COMM_WORLD);
		MPI_Wait(&r, &st);
		CHECK(st.MPI_SOURCE == rank, "self ssend source %d", st.MPI_SOURCE);
		verify(in, n, rank, 610 + (int)k);
		free(out);
		free(in);
	}
}

/* Fast enough for 64 MiB under emulation: a pattern block copied at an offset per chunk. */
#define BIG_CHUNK 65536
static unsigned char big_pat[BIG_CHUNK + 256];

static const unsigned char *big_chunk(size_t c, int tag)
{
	return big_pat + (c * 7 + (size_t)tag) % 251;
}

static void big_fill(unsigned char *b, size_t n, int tag)
{
	for (size_t off = 0; off < n; off += BIG_CHUNK)
		memcpy(b + off, big_chunk(off / BIG_CHUNK, tag), BIG_CHUNK);
}

static void big_verify(const unsigned char *b, size_t n, int tag)
{
	for (size_t off = 0; off < n; off += BIG_CHUNK)
		CHECK(!memcmp(b + off, big_chunk(off / BIG_CHUNK, tag), BIG_CHUNK),
		      "tag %d: bytes %zu..%zu of %zu wrong", tag, off, off + BIG_CHUNK - 1, n);
}

/* Rank 0 to rank 1: 64 MiB, then two 16 MiB messages at once, received in the opposite order. */
static void test_big(void)
{
	const size_t n = 64u << 20, m = 16u << 20;
	unsigned char *b = malloc(n);
	MPI_Request req[2];
	MPI_Status st;
	int count;

	CHECK(b, "malloc");
	for (size_t i = 0; i < sizeof(big_pat); i++)
		big_pat[i] = pattern(3, 5, i);
	if (rank == 0) {
		big_fill(b, n, 500);
		MPI_Send(b, (int)n, MPI_BYTE, 1, 500, MPI_COMM_WORLD);
		big_fill(b, m, 501);
		big_fill(b + m, m, 502);
		MPI_Isend(b, (int)m, MPI_BYTE, 1, 501, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(b + m, (int)m, MPI_BYTE, 1, 502, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	} else if (rank == 1) {
		memset(b, 0, n);
		MPI_Recv(b, (int)n, MPI_BYTE, 0, 500, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		CHECK((size_t)count == n, "64 MiB: count %d", count);
		big_verify(b, n, 500);
		memset(b, 0, 2 * m);
		MPI_Irecv(b + m, (int)m, MPI_BYTE, 0, 502, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(b, (int)m, MPI_BYTE, 0, 501, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		big_verify(b, m, 501);
		big_verify(b + m, m, 502);
	}
	free(b);
}

static void test_collective(void)
{
	long v = rank + 1, sum = 0;

	MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == (long)size * (size + 1) / 2, "allreduce %ld", sum);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size >= 2 && size <= 64, "needs 2 to 64 ranks, not %d", size);
	/* A barrier between tests: a wildcard receive must not take the next test's messages. */
	test_ring();
	MPI_Barrier(MPI_COMM_WORLD);
	test_nonblocking();
	MPI_Barrier(MPI_COMM_WORLD);
	test_wildcards();
	MPI_Barrier(MPI_COMM_WORLD);
	test_probe();
	MPI_Barrier(MPI_COMM_WORLD);
	test_ssend();
	MPI_Barrier(MPI_COMM_WORLD);
	test_cancel_truncate();
	MPI_Barrier(MPI_COMM_WORLD);
	test_self();
	MPI_Barrier(MPI_COMM_WORLD);
	test_collective();
	MPI_Barrier(MPI_COMM_WORLD);
	if (argc > 1 && !strcmp(argv[1], "big")) {
		test_big();
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (!rank)
		printf("mpi_twosided: %d ranks ok%s\n", size, argc > 1 ? " (with 64 MiB)" : "");
	MPI_Finalize();
	return 0;
}
