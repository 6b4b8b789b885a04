// SPDX-License-Identifier: MIT
/*
 * One-sided windows: a shared counter and a lock-protected histogram,
 * launched by any PMIx launcher:
 *
 *   mpirun -np 4 build/examples/counter [TICKETS [BUCKETS]]
 *
 * Rank 0's window holds a 64-bit counter and a histogram of BUCKETS
 * 64-bit bins. Every rank draws TICKETS tickets (default 100) with
 * fetch-and-op on the counter (the kernel's remote atomic: rank 0's process
 * takes no part) and, for each, adds one to bin ticket % BUCKETS (default
 * 7) by reading, changing and writing the histogram under an exclusive
 * lock on rank 0. Rank 0 then checks that the counter is TICKETS * ranks and
 * that every bin holds exactly its share.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <usnicrel_win.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "counter: %s: %s\n", what, urel_strerror(err));
	return 1;
}

/* Add one to bin @bin of rank 0's histogram: a read-modify-write only a lock makes safe. */
static int histogram_add(struct urel_win *w, int buckets, uint64_t bin)
{
	uint64_t *hist = calloc((size_t)buckets, sizeof(*hist));
	int ret;

	if (!hist)
		return -1;
	ret = urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0);
	if (!ret)
		ret = urel_win_get(w, hist, (size_t)buckets * 8, 0, 1);
	if (!ret)
		ret = urel_win_flush(w, 0); /* the get's bytes are here */
	if (!ret) {
		hist[bin]++;
		ret = urel_win_put(w, &hist[bin], 8, 0, 1 + bin);
	}
	if (!ret)
		ret = urel_win_unlock(w, 0);
	free(hist);
	return ret;
}

static int run(struct urel_group *g, int tickets, int buckets)
{
	int rank = urel_group_rank(g), n = urel_group_size(g), ret;
	uint64_t *mem = NULL, one = 1, ticket;
	struct urel_win *w;

	/* Rank 0 exposes counter and bins, in units of 8 bytes; the others expose nothing. */
	ret = urel_win_allocate(g, rank ? 0 : (size_t)(1 + buckets) * 8, 8, (void **)&mem, &w);
	if (ret)
		return fail("window", ret);
	for (int i = 0; i < tickets; i++) {
		ret = urel_win_lock(w, UREL_WIN_LOCK_SHARED, 0, 0);
		if (!ret)
			ret = urel_win_fetch_and_op(w, &one, &ticket, UREL_WIN_UINT64, 0, 0,
						    UREL_WIN_SUM);
		if (!ret)
			ret = urel_win_unlock(w, 0);
		if (!ret)
			ret = histogram_add(w, buckets, ticket % (uint64_t)buckets);
		if (ret)
			return fail("ticket", ret);
	}
	ret = urel_group_barrier(g);
	if (ret)
		return fail("barrier", ret);
	if (rank == 0) {
		uint64_t total = (uint64_t)tickets * (uint64_t)n, sum = 0;

		if (mem[0] != total) {
			fprintf(stderr, "counter: %llu tickets, want %llu\n",
				(unsigned long long)mem[0], (unsigned long long)total);
			return 1;
		}
		for (int b = 0; b < buckets; b++) {
			/* Tickets 0 .. total-1: bin b holds those equal to b modulo buckets. */
			uint64_t want = total / (uint64_t)buckets +
					((uint64_t)b < total % (uint64_t)buckets);

			sum += mem[1 + b];
			if (mem[1 + b] != want) {
				fprintf(stderr, "counter: bin %d holds %llu, want %llu\n", b,
					(unsigned long long)mem[1 + b], (unsigned long long)want);
				return 1;
			}
		}
		printf("counter: %d ranks, %llu tickets in %d bins: ok\n", n,
		       (unsigned long long)sum, buckets);
	}
	ret = urel_win_free(w);
	return ret ? fail("free", ret) : 0;
}

int main(int argc, char **argv)
{
	int tickets = argc > 1 ? atoi(argv[1]) : 100, buckets = argc > 2 ? atoi(argv[2]) : 7;
	const char *ip = getenv("UREL_ADDR") ? getenv("UREL_ADDR") : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct urel_device *dev;
	struct urel_group *world;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_ep *ep;
	int ret;

	if (tickets < 1 || buckets < 1 || inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: mpirun -np N counter [TICKETS [BUCKETS]] (UREL_ADDR=ip)\n");
		return 2;
	}
	ret = urel_device_open(NULL, &dev);
	if (ret)
		return fail("open", ret);
	ret = urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep);
	if (ret)
		return fail("endpoint", ret);
	ret = urel_msg_open(ep, NULL, &m);
	if (ret)
		return fail("tagged messaging", ret);
	ret = urel_job_init_pmix(m, &job);
	if (ret)
		return fail("PMIx bootstrap (start with mpirun)", ret);
	ret = urel_group_world(job, UREL_TAG_1, &world);
	if (ret)
		return fail("world group", ret);
	ret = run(world, tickets, buckets);
	urel_group_free(world);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return ret;
}
