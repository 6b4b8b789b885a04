/* SPDX-License-Identifier: MIT */
/*
 * One-sided windows (usnicrel_win.h) under mpirun: the latency of each
 * operation and of a lock epoch, put bandwidth beside the core's own put,
 * and a counter every rank but 0 increments with fetch-and-op. The same
 * measurements as bench/mpi/osc_mpi.c, which runs them over Open MPI, with
 * the same output lines:
 *
 *   mpirun -np 2 osc_bench lat [ITERS]     rank 0 the origin, rank 1 the target
 *   mpirun -np N osc_bench counter [ITERS] ITERS increments per origin
 *
 *   osc_bench impl=urel op=OP size=BYTES lat_us=US
 *   osc_bench impl=urel op=put_bw|core_put_bw size=65536 MBps=MB
 *   osc_bench impl=urel op=counter np=N kops=K
 *
 * Latency: ITERS round trips in LAT_BLOCKS blocks, the operations' blocks
 * interleaved after an unmeasured turn of each, each the operation and a
 * flush (remote completion) inside a lock_all epoch per block (its first
 * operation, unmeasured, takes the lazy locks); lock_unlock is
 * an empty exclusive epoch, lock_put_unlock one with a put of 8 bytes. Put
 * bandwidth: bursts of BURST puts of 64 KiB, each burst flushed; the core's
 * put (urel_ep_put into memory the target registered) the same bursts, each
 * waited for. The rank binds UREL_ADDR (default 127.0.0.1).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <usnicrel_win.h>

#define BW_SIZE 65536
#define BURST 16
#define LAT_BLOCKS 10

static int rank, nranks;

static void die(int line, int err)
{
	fprintf(stderr, "osc_bench: rank %d: line %d: %s\n", rank, line, urel_strerror(err));
	exit(1);
}
#define CALL(x)                                                                                    \
	do {                                                                                       \
		int e_ = (x);                                                                      \
		if (e_ < 0)                                                                        \
			die(__LINE__, e_);                                                         \
	} while (0)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * The library's threads in this process (all but the main one): how often
 * they went to sleep (voluntary context switches: a sleep on the device or
 * a stand-back, each ended by a wake-up) and their CPU time, and how often
 * the main thread was preempted. Not a result: where the progress
 * threads' cost goes (bench/osc_ab prints it).
 */
struct thread_use {
	unsigned long long wakes, cpu_ns, main_preempted;
};

static unsigned long long task_status(pid_t tid, const char *key)
{
	unsigned long long v = 0;
	char path[64], line[128];
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static void thread_use(struct thread_use *u)
{
	pid_t self = getpid();
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	*u = (struct thread_use){ .main_preempted =
					  task_status(self, "nonvoluntary_ctxt_switches") };
	while (dir && (d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		struct timespec ts;

		if (tid <= 0 || tid == self)
			continue;
		u->wakes += task_status(tid, "voluntary_ctxt_switches");
		/* Another thread's CPU clock, by the kernel's encoding of a thread id. */
		if (!clock_gettime(((~(clockid_t)tid) << 3) | 6, &ts))
			u->cpu_ns += (unsigned long long)ts.tv_sec * 1000000000ULL +
				     (unsigned long long)ts.tv_nsec;
	}
	if (dir)
		closedir(dir);
}

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

static void one(struct urel_win *w, enum op op)
{
	uint64_t v = 1, r;

	switch (op) {
	case OP_PUT:
		CALL(urel_win_put(w, &v, 8, 1, 0));
		break;
	case OP_GET:
		CALL(urel_win_get(w, &r, 8, 1, 0));
		break;
	case OP_ACC:
		CALL(urel_win_accumulate(w, &v, 1, UREL_WIN_UINT64, 1, 8, UREL_WIN_SUM));
		break;
	case OP_FOP:
		CALL(urel_win_fetch_and_op(w, &v, &r, UREL_WIN_UINT64, 1, 16, UREL_WIN_SUM));
		break;
	case OP_LOCK:
	case OP_LOCK_PUT:
		CALL(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 1, 0));
		if (op == OP_LOCK_PUT)
			CALL(urel_win_put(w, &v, 8, 1, 0));
		CALL(urel_win_unlock(w, 1));
		return;
	}
	CALL(urel_win_flush(w, 1));
}

/*
 * OSC_BENCH_OPS (a comma-separated list of op names): only those, and no
 * bandwidth runs, so that counters read around the run are theirs alone.
 */
static bool wanted(enum op op)
{
	const char *ops = getenv("OSC_BENCH_OPS");
	size_t n = strlen(op_name[op]);

	for (const char *p = ops; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0)) {
		if (strcspn(p, ",") == n && !strncmp(p, op_name[op], n))
			return true;
	}
	return !ops;
}

/*
 * @n of @op, in a lock_all epoch when it is a single operation; the time
 * taken. The origin's sleeps on the device meanwhile are added to *@sleeps,
 * its progress thread's stand-backs to *@standbacks.
 */
static double lat_block(struct urel_win *w, enum op op, int n, uint64_t *sleeps,
			uint64_t *standbacks, struct thread_use *use)
{
	struct urel_win_stats st0, st;
	struct thread_use u0, u;
	bool in_all = op < OP_LOCK;
	double t0;

	if (in_all) {
		CALL(urel_win_lock_all(w, 0));
		one(w, op); /* unmeasured: a lazy lock is taken here */
	}
	CALL(urel_win_stats(w, &st0));
	thread_use(&u0);
	t0 = now_us();
	for (int i = 0; i < n; i++)
		one(w, op);
	t0 = now_us() - t0;
	thread_use(&u);
	CALL(urel_win_stats(w, &st));
	use->wakes += u.wakes - u0.wakes;
	use->cpu_ns += u.cpu_ns - u0.cpu_ns;
	use->main_preempted += u.main_preempted - u0.main_preempted;
	*sleeps += st.sleeps - st0.sleeps;
	*standbacks += st.standbacks - st0.standbacks;
	if (in_all)
		CALL(urel_win_unlock_all(w));
	return t0;
}

/*
 * Every operation in LAT_BLOCKS turns, one block of each after the other,
 * after an unmeasured turn: the host's load drifts, and interleaving puts the
 * same drift in every row, so that their ratios mean something.
 */
static void lat(struct urel_win *w, int iters)
{
	double sum[OP_LOCK_PUT + 1] = { 0 };
	uint64_t sleeps[OP_LOCK_PUT + 1] = { 0 }, standbacks[OP_LOCK_PUT + 1] = { 0 }, drop;
	struct thread_use use[OP_LOCK_PUT + 1] = { 0 }, drop_use;
	int n = iters / LAT_BLOCKS * LAT_BLOCKS;

	for (int b = -1; b < LAT_BLOCKS; b++) {
		for (enum op op = OP_PUT; op <= OP_LOCK_PUT; op++) {
			double t = wanted(op) ? lat_block(w, op, iters / LAT_BLOCKS,
							  b >= 0 ? &sleeps[op] : &drop,
							  b >= 0 ? &standbacks[op] : &drop,
							  b >= 0 ? &use[op] : &drop_use)
					      : 0;

			if (b >= 0)
				sum[op] += t;
		}
	}
	for (enum op op = OP_PUT; op <= OP_LOCK_PUT; op++) {
		if (wanted(op))
			printf("osc_bench impl=urel op=%s size=8 lat_us=%.2f\n", op_name[op],
			       sum[op] / n);
	}
	/* Not a result line (bench/run reads only those): where the time goes. */
	for (enum op op = OP_PUT; op <= OP_LOCK_PUT; op++) {
		if (wanted(op))
			printf("osc_bench sleeps op=%s per_op=%.3f standbacks=%.3f "
			       "thread_wakes=%.3f "
			       "thread_cpu_us_per_kop=%.0f main_preempted=%.3f\n",
			       op_name[op], (double)sleeps[op] / n, (double)standbacks[op] / n,
			       (double)use[op].wakes / n, (double)use[op].cpu_ns / n,
			       (double)use[op].main_preempted / n);
	}
}

static void put_bw(struct urel_win *w, void *buf, int bursts)
{
	double t0 = 0;

	CALL(urel_win_lock_all(w, 0));
	for (int b = -1; b < bursts; b++) {
		if (!b)
			t0 = now_us();
		for (int i = 0; i < BURST; i++)
			CALL(urel_win_put(w, buf, BW_SIZE, 1, (uint64_t)i * BW_SIZE));
		CALL(urel_win_flush(w, 1));
	}
	printf("osc_bench impl=urel op=put_bw size=%d MBps=%.2f\n", BW_SIZE,
	       (double)bursts * BURST * BW_SIZE / (now_us() - t0));
	CALL(urel_win_unlock_all(w));
}

/* The core's put: a request per put, counted down by its completion. */
struct core_put {
	struct urel_request req;
	int *left, status;
};

static void core_put_done(struct urel_request *req, const struct urel_completion *c)
{
	struct core_put *p = (struct core_put *)req;

	if (c->status)
		p->status = c->status;
	(*p->left)--;
}

static int core_post(struct urel_ep *ep, struct urel_msg *m, urel_peer_t peer, void *buf,
		     uint64_t rkey, uint64_t off, struct core_put *p)
{
	int ret;

	while ((ret = urel_ep_put(ep, peer, buf, BW_SIZE, rkey, off, &p->req, 0)) == -EAGAIN ||
	       ret == -ENOBUFS)
		CALL(urel_msg_progress(m)); /* the send queue is full: completions free it */
	return ret;
}

struct core_mem {
	uint64_t addr, rkey;
};

static void core_put_bw(struct urel_ep *ep, struct urel_msg *m, struct urel_group *g,
			urel_peer_t peer, void *buf, int bursts)
{
	struct core_mem mine, all[2];
	struct core_put p[BURST];
	struct urel_mr *mr;
	double t0 = 0;
	int left;

	CALL(urel_mr_reg(ep, buf, (size_t)BURST * BW_SIZE,
			 UREL_ACCESS_LOCAL_WRITE | UREL_ACCESS_REMOTE_WRITE, &mr));
	mine.addr = (uintptr_t)buf;
	mine.rkey = urel_mr_rkey(mr);
	CALL(urel_group_allgather(g, &mine, sizeof(mine), all));
	for (int b = -1; rank == 0 && b < bursts; b++) {
		if (!b)
			t0 = now_us();
		left = BURST;
		for (int i = 0; i < BURST; i++) {
			p[i].req.complete = core_put_done;
			p[i].left = &left;
			p[i].status = 0;
			CALL(core_post(ep, m, peer, buf, all[1].rkey, (uint64_t)i * BW_SIZE,
				       &p[i]));
		}
		while (left)
			CALL(urel_msg_progress(m));
		for (int i = 0; i < BURST; i++)
			CALL(p[i].status);
	}
	if (rank == 0)
		printf("osc_bench impl=urel op=core_put_bw size=%d MBps=%.2f\n", BW_SIZE,
		       (double)bursts * BURST * BW_SIZE / (now_us() - t0));
	CALL(urel_group_barrier(g));
	urel_mr_dereg(mr);
}

/* Every rank but 0 adds 1 to rank 0's counter @iters times; rank 0 checks the sum. */
static void counter(struct urel_group *g, int iters)
{
	uint64_t *mem, one_ = 1, r;
	struct urel_win *w;
	double t0;

	CALL(urel_win_allocate(g, 8, 8, (void **)&mem, &w));
	CALL(urel_group_barrier(g));
	t0 = now_us();
	if (rank) {
		CALL(urel_win_lock_all(w, 0));
		for (int i = 0; i < iters; i++) {
			CALL(urel_win_fetch_and_op(w, &one_, &r, UREL_WIN_UINT64, 0, 0,
						   UREL_WIN_SUM));
			CALL(urel_win_flush(w, 0)); /* as MPI needs for the result */
		}
		CALL(urel_win_unlock_all(w));
	}
	CALL(urel_group_barrier(g));
	if (rank == 0) {
		double us = now_us() - t0;
		uint64_t want = (uint64_t)iters * (uint64_t)(nranks - 1);

		if (__atomic_load_n(mem, __ATOMIC_ACQUIRE) != want) {
			fprintf(stderr, "osc_bench: counter %llu, want %llu\n",
				(unsigned long long)*mem, (unsigned long long)want);
			exit(1);
		}
		printf("osc_bench impl=urel op=counter np=%d kops=%.3f\n", nranks,
		       (double)want / us * 1e3);
	}
	CALL(urel_win_free(w));
}

int main(int argc, char **argv)
{
	const char *ip = getenv("UREL_ADDR") ? getenv("UREL_ADDR") : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const char *mode = argc > 1 ? argv[1] : "lat";
	int iters = argc > 2 ? atoi(argv[2]) : 200;
	struct urel_device *dev;
	struct urel_group *g;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_ep *ep;

	if (iters < 10 || inet_pton(AF_INET, ip, &sin.sin_addr) != 1 ||
	    (strcmp(mode, "lat") && strcmp(mode, "counter"))) {
		fprintf(stderr, "usage: mpirun -np N osc_bench lat|counter [ITERS >= 10]\n");
		return 2;
	}
	CALL(urel_device_open(NULL, &dev));
	CALL(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep));
	CALL(urel_msg_open(ep, NULL, &m));
	CALL(urel_job_init_pmix(m, &job));
	CALL(urel_group_world(job, UREL_TAG_1, &g));
	rank = urel_group_rank(g);
	nranks = urel_group_size(g);
	if (!strcmp(mode, "counter")) {
		counter(g, iters);
	} else if (nranks != 2) {
		fprintf(stderr, "osc_bench: lat runs on 2 ranks\n");
		return 2;
	} else {
		void *mem, *buf = aligned_alloc(4096, (size_t)BURST * BW_SIZE);
		struct urel_win *w;

		if (!buf)
			die(__LINE__, -ENOMEM);
		memset(buf, 0x5a, (size_t)BURST * BW_SIZE);
		struct thread_use u0, u;

		CALL(urel_win_allocate(g, (size_t)BURST * BW_SIZE, 1, &mem, &w));
		thread_use(&u0);
		if (rank == 0) {
			lat(w, iters);
			if (!getenv("OSC_BENCH_OPS"))
				put_bw(w, buf, iters / 10);
		}
		CALL(urel_group_barrier(g));
		thread_use(&u);
		if (rank == 1)
			printf("osc_bench target_threads wakes=%llu cpu_ms=%.1f\n",
			       u.wakes - u0.wakes, (double)(u.cpu_ns - u0.cpu_ns) / 1e6);
		CALL(urel_win_free(w));
		if (!getenv("OSC_BENCH_OPS"))
			core_put_bw(ep, m, g, urel_job_peer(job, 1), buf, iters / 10);
		free(buf);
	}
	fflush(stdout);
	urel_group_free(g);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return 0;
}
