// SPDX-License-Identifier: MIT
/*
 * In-VM test of passive-target progress (usnicrel_win.h), launched by
 * mpirun (tests/user/mpirun_osc.sh):
 *
 *   osc_passive ITERS thread|nothread
 *
 * Rank 0 is the target. Once its window exists it raises a "go" word in
 * its own memory and computes: a loop that only reads its window memory
 * and sleeps, never calling the library. Every other rank first reads "go"
 * with gets under a NOCHECK lock (the target's kernel serves both) and
 * then marks itself started with a put, so no origin asks anything of the
 * target's library before the target stopped calling it (the window's
 * creation is a collective the origins may leave first, and the target
 * serves them while it waits there). Then, ITERS times, it locks rank 0
 * (shared and exclusive in turn) and accumulates, fetch-and-ops through
 * the kernel's atomics and through the target's library, get-accumulates
 * and puts, then unlocks; last it adds 1 to a "done" word under an
 * exclusive lock. The target's loop ends only when it sees done ==
 * origins in its own memory: every lock grant and every accumulate was
 * served while it computed, which only the window's progress thread can do.
 *
 * "nothread" (run with UREL_OSC_PROGRESS_THREAD=0) is the control: the
 * target computes until every origin started, then a few seconds more, and
 * must then see nothing the library applies (the 16-bit and double
 * counters still 0, done == 0: every origin waits in its first epoch for
 * the target's lock manager or its 16-bit fetch-and-op); only when it
 * calls the library again do the origins finish. Both modes then check
 * every sum and that the fetched values of every counter are a
 * permutation: no update lost or applied twice. Each origin reports how
 * many of its calls failed (a failed call is skipped, so it could let
 * done through early).
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <usnicrel_win.h>

enum {
	W_SUM,
	W_KCOUNT,
	W_LCOUNT,
	W_DCOUNT,
	W_DONE,
	W_GO,
	W_STAMP,
	W_STARTED = W_STAMP + 64,
	W_WORDS = W_STARTED + 64
};

/* The control's compute phase once every origin started: long enough for them to have tried. */
#define NOTHREAD_COMPUTE_S 3
/* A target that never sees done: a hang in the making, reported rather than waited out. */
#define GIVE_UP_S 240

static int rank, nranks, iters, failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "osc_passive: rank %d: line %d: ", rank, __LINE__);        \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)
#define OK(call)                                                                                   \
	do {                                                                                       \
		int ret_ = (call);                                                                 \
		CHECK(!ret_, "%s = %d (%s)", #call, ret_, urel_strerror(ret_));                    \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Compute: read our own memory and sleep, no library call, until done or @limit seconds. */
static int64_t compute(const int64_t *mem, int64_t want, double limit)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	double start = now_s();
	int64_t done;

	while ((done = __atomic_load_n(&mem[W_DONE], __ATOMIC_ACQUIRE)) < want &&
	       now_s() - start < limit)
		nanosleep(&nap, NULL);
	return done;
}

/* Compute until every origin's put marked it started, or @limit seconds: how many did. */
static int started(const int64_t *mem, double limit)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	double start = now_s();
	int n;

	for (;;) {
		n = 0;
		for (int r = 1; r < nranks; r++)
			n += __atomic_load_n(&mem[W_STARTED + r], __ATOMIC_ACQUIRE) != 0;
		if (n == nranks - 1 || now_s() - start >= limit)
			return n;
		nanosleep(&nap, NULL);
	}
}

/* Every value 0 .. n-1 exactly once. */
static bool permutation(const int64_t *v, size_t n)
{
	unsigned char *seen = calloc(n, 1);
	bool ok = seen != NULL;

	for (size_t i = 0; ok && i < n; i++) {
		if (v[i] < 0 || (size_t)v[i] >= n || seen[v[i]])
			ok = false;
		else
			seen[v[i]] = 1;
	}
	free(seen);
	return ok;
}

/*
 * Wait for the target's "go", then mark us started: a NOCHECK lock sends
 * no request, and gets and puts are the target kernel's, so nothing here
 * needs the target's library.
 */
static void await_go(struct urel_win *w)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	const int64_t one = 1;
	double start = now_s();
	int64_t go = 0;

	OK(urel_win_lock(w, UREL_WIN_LOCK_SHARED, 0, UREL_WIN_MODE_NOCHECK));
	while (!go && now_s() - start < GIVE_UP_S) {
		OK(urel_win_get(w, &go, sizeof(go), 0, W_GO));
		OK(urel_win_flush(w, 0));
		if (!go)
			nanosleep(&nap, NULL);
	}
	CHECK(go, "the target never said go");
	OK(urel_win_put(w, &one, sizeof(one), 0, W_STARTED + (uint64_t)rank));
	OK(urel_win_unlock(w, 0));
}

static void origin(struct urel_win *w, int64_t *fetched)
{
	const int64_t one = 1, mine = rank;
	const int16_t one16 = 1;
	const double oned = 1.0;

	await_go(w);
	for (int i = 0; i < iters; i++) {
		int64_t k, stamp = i;
		int16_t l;
		double d;

		OK(urel_win_lock(w, i % 2 ? UREL_WIN_LOCK_EXCLUSIVE : UREL_WIN_LOCK_SHARED, 0, 0));
		OK(urel_win_accumulate(w, &mine, 1, UREL_WIN_INT64, 0, W_SUM, UREL_WIN_SUM));
		/* 8-byte sum: the kernel's atomic; 2-byte: the target's library. */
		OK(urel_win_fetch_and_op(w, &one, &k, UREL_WIN_INT64, 0, W_KCOUNT, UREL_WIN_SUM));
		OK(urel_win_fetch_and_op(w, &one16, &l, UREL_WIN_INT16, 0, W_LCOUNT, UREL_WIN_SUM));
		OK(urel_win_get_accumulate(w, &oned, &d, 1, UREL_WIN_DOUBLE, 0, W_DCOUNT,
					   UREL_WIN_SUM));
		OK(urel_win_put(w, &stamp, sizeof(stamp), 0, W_STAMP + (uint64_t)rank));
		OK(urel_win_unlock(w, 0));
		fetched[3 * i] = k;
		fetched[3 * i + 1] = l;
		fetched[3 * i + 2] = (int64_t)d;
	}
	OK(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0));
	OK(urel_win_accumulate(w, &one, 1, UREL_WIN_INT64, 0, W_DONE, UREL_WIN_SUM));
	OK(urel_win_unlock(w, 0));
	fprintf(stderr, "osc_passive: rank %d: %d failed calls\n", rank, failures);
}

static void target(struct urel_msg *m, int64_t *mem, bool thread)
{
	int64_t origins = nranks - 1, done;
	int16_t l;
	double d;
	int begun;

	/* Nothing between this store and the compute loop calls the library. */
	__atomic_store_n(&mem[W_GO], 1, __ATOMIC_RELEASE);
	if (thread) {
		done = compute(mem, origins, GIVE_UP_S);
		CHECK(done == origins,
		      "the origins finished %lld of %lld while the target computed",
		      (long long)done, (long long)origins);
		if (done == origins)
			printf("osc_passive: every origin finished while the target computed\n");
		return;
	}
	begun = started(mem, GIVE_UP_S);
	CHECK(begun == origins, "%d of %lld origins started", begun, (long long)origins);
	done = compute(mem, origins, NOTHREAD_COMPUTE_S);
	memcpy(&l, &mem[W_LCOUNT], sizeof(l));
	memcpy(&d, &mem[W_DCOUNT], sizeof(d));
	CHECK(done == 0 && l == 0 && d == 0,
	      "without a progress thread the target's library served origins while it computed: "
	      "done %lld, 16-bit counter %d, double counter %g",
	      (long long)done, l, d);
	if (begun == origins && done == 0 && l == 0 && d == 0)
		printf("osc_passive: nothing applied while the target computed without a "
		       "thread\n");
	/* Back in the library: now the origins get through. */
	while (__atomic_load_n(&mem[W_DONE], __ATOMIC_ACQUIRE) < origins) {
		int n = urel_msg_progress(m);

		CHECK(n >= 0, "urel_msg_progress = %d", n);
		if (n < 0)
			break;
	}
}

int main(int argc, char **argv)
{
	const char *ip = getenv("UREL_ADDR") ? getenv("UREL_ADDR") : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct urel_device *dev;
	struct urel_group *world;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_win *w;
	struct urel_ep *ep;
	int64_t *mem, *fetched, *all;
	int ret, total = 0;
	bool thread;

	iters = argc > 2 ? atoi(argv[1]) : 0;
	thread = argc > 2 && !strcmp(argv[2], "thread");
	if (iters < 1 || (!thread && strcmp(argv[2], "nothread")) ||
	    inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: mpirun -np N osc_passive ITERS thread|nothread\n");
		return 2;
	}
	if ((ret = urel_device_open(NULL, &dev)) ||
	    (ret = urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep)) ||
	    (ret = urel_msg_open(ep, NULL, &m)) || (ret = urel_job_init_pmix(m, &job)) ||
	    (ret = urel_group_world(job, UREL_TAG_1, &world))) {
		fprintf(stderr, "osc_passive: setup (start with mpirun): %s\n", urel_strerror(ret));
		return 1;
	}
	rank = urel_group_rank(world);
	nranks = urel_group_size(world);
	if (nranks < 2 || nranks > 64) {
		fprintf(stderr, "osc_passive: 2 to 64 ranks\n");
		return 2;
	}
	fetched = calloc((size_t)iters * 3, sizeof(*fetched));
	all = calloc((size_t)iters * 3 * (size_t)nranks, sizeof(*all));
	OK(urel_win_allocate(world, W_WORDS * sizeof(int64_t), sizeof(int64_t), (void **)&mem, &w));
	if (rank == 0)
		target(m, mem, thread);
	else
		origin(w, fetched);
	/* Every fetched value of every origin, counter by counter, must be a permutation. */
	OK(urel_group_allgather(world, fetched, (size_t)iters * 3 * sizeof(*fetched), all));
	for (int c = 0; c < 3 && rank == 0; c++) {
		size_t n = (size_t)iters * (size_t)(nranks - 1);
		int64_t *v = calloc(n, sizeof(*v));

		for (size_t j = 0; j < n; j++)
			v[j] = all[(size_t)iters * 3 + j * 3 + (size_t)c];
		CHECK(permutation(v, n),
		      "counter %d: the fetched values are not 0 .. %zu once each", c, n - 1);
		free(v);
	}
	if (rank == 0) {
		int64_t origins = nranks - 1, ranks_sum = (int64_t)nranks * (nranks - 1) / 2;
		int16_t l;
		double d;

		memcpy(&l, &mem[W_LCOUNT], sizeof(l));
		memcpy(&d, &mem[W_DCOUNT], sizeof(d));
		CHECK(mem[W_SUM] == iters * ranks_sum, "sum %lld, want %lld", (long long)mem[W_SUM],
		      (long long)(iters * ranks_sum));
		CHECK(mem[W_KCOUNT] == iters * origins, "kernel counter %lld",
		      (long long)mem[W_KCOUNT]);
		CHECK(l == iters * origins, "library counter %d", l);
		CHECK(d == (double)(iters * origins), "double counter %g", d);
		CHECK(mem[W_DONE] == origins, "done %lld", (long long)mem[W_DONE]);
		for (int r = 1; r < nranks; r++)
			CHECK(mem[W_STAMP + r] == iters - 1, "stamp of rank %d: %lld", r,
			      (long long)mem[W_STAMP + r]);
	}
	OK(urel_win_free(w));
	{
		int *verdicts = calloc((size_t)nranks, sizeof(*verdicts));

		OK(urel_group_allgather(world, &failures, sizeof(failures), verdicts));
		for (int r = 0; r < nranks; r++)
			total += verdicts[r];
		free(verdicts);
	}
	if (rank == 0 && !total)
		printf("osc_passive: %d ranks, %d iterations, %s: ok\n", nranks, iters,
		       thread ? "thread" : "nothread");
	free(fetched);
	free(all);
	urel_group_free(world);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return total ? 1 : 0;
}
