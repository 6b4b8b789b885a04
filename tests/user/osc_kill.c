// SPDX-License-Identifier: MIT
/*
 * In-VM test, launched by mpirun (tests/user/mpirun_osc_kill.sh): the last
 * rank of a window dies (SIGKILL) while the others hold or wait for its
 * lock, and their window calls must fail with UREL_WIN_ERR_PEER, none hang.
 *
 * After a checked fence round, rank 0 locks the victim exclusively and
 * accumulates (flushed: the victim is alive and serves it), then tells
 * the others by a put into their memory; every survivor then adds 1 to
 * the victim's "go" word with the kernel's atomic, and ranks 1 .. n-2 ask
 * for the victim's exclusive lock, which rank 0 holds: they wait in
 * urel_win_lock(). The victim kills itself once go
 * counts every survivor. Rank 0 waits until the victim's process is gone,
 * then accumulates to it: the flush must fail with UREL_WIN_ERR_PEER, and
 * so must the unlock and a new lock; the waiting lockers' calls must end
 * with the same error, and later operations to the victim fail at once.
 * Rank 0 also leaves a request to the victim unanswered: calls that wait
 * only on rank 1 must complete beside it, and the request fail alone.
 * The survivors' window still works among themselves (locks and
 * accumulates in a ring, each checked at its target, then a PSCW ring; a
 * fence, which waits for every member, fails), and, once they met
 * by messages, urel_win_free() frees locally with UREL_WIN_ERR_PEER
 * instead of waiting for the dead.
 * Each survivor prints "rank R: ok" only when all of that held; the
 * script's timeout turns a hang into a failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <usnicrel_win.h>

enum {
	W_FENCE = 8,
	W_HELD = 9,
	W_GO = 16,
	W_ACC = 17,
	W_RINGACC = 18,
	W_FOP = 19, /* rank 1: rank 0's fetch_and_op beside the dead rank */
	W_PSCW = 20,
	W_WORDS = 32
};

static int me, n, victim;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: %s\n", me, __FILE__, __LINE__, #cond);    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define EXPECT(call, want)                                                                         \
	do {                                                                                       \
		int got_ = (call);                                                                 \
		if (got_ != (want)) {                                                              \
			fprintf(stderr, "rank %d: line %d: %s = %d (%s), want %d\n", me, __LINE__, \
				#call, got_, urel_strerror(got_), (int)(want));                    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static void nap(void)
{
	const struct timespec ts = { .tv_nsec = 1000000 };

	nanosleep(&ts, NULL);
}

/* Gone: no such process, or a zombie nobody reaped yet (same host: mpirun runs us all here). */
static int process_gone(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t len;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void victim_part(struct urel_win *w, int64_t *mem)
{
	(void)w;
	/* Compute until every survivor said go; the progress thread serves rank 0 meanwhile. */
	while (__atomic_load_n(&mem[W_GO], __ATOMIC_ACQUIRE) < n - 1)
		nap();
	printf("rank %d: killing myself\n", me);
	fflush(stdout);
	raise(SIGKILL);
}

/*
 * Rank 0, the victim known dead and a request to it never answered: calls
 * that wait only on rank 1 complete (a kernel fetch_and_op, a get, their
 * flush and unlock); the request fails alone.
 */
static void live_beside_dead(struct urel_win *w, struct urel_win_req *vreq)
{
	const int64_t one = 1;
	int64_t old = -1, back = -1;

	EXPECT(urel_win_lock(w, UREL_WIN_LOCK_SHARED, 1, 0), 0);
	EXPECT(urel_win_fetch_and_op(w, &one, &old, UREL_WIN_INT64, 1, W_FOP, UREL_WIN_SUM), 0);
	CHECK(old == 0);
	EXPECT(urel_win_get(w, &back, sizeof(back), 1, W_FOP), 0);
	EXPECT(urel_win_flush(w, 1), 0);
	CHECK(back == 1);
	EXPECT(urel_win_unlock(w, 1), 0);
	if (vreq)
		EXPECT(urel_win_req_wait(vreq), UREL_WIN_ERR_PEER);
	printf("rank %d: operations beside the dead rank completed\n", me);
}

/*
 * The survivors' PSCW ring (each exposes to its predecessor, accesses its
 * successor): no call waits on the dead rank, so all complete; a fence
 * (collective, the dead rank included) fails instead of waiting for it.
 */
static void survivors_pscw(struct urel_win *w, int64_t *mem)
{
	int next = (me + 1) % (n - 1), prev = (me + n - 2) % (n - 1);
	int64_t v = 100 + me;

	EXPECT(urel_win_post(w, &prev, 1, 0), 0);
	EXPECT(urel_win_start(w, &next, 1, 0), 0);
	EXPECT(urel_win_put(w, &v, sizeof(v), next, W_PSCW), 0);
	EXPECT(urel_win_complete(w), 0);
	EXPECT(urel_win_wait(w), 0);
	CHECK(mem[W_PSCW] == 100 + prev);
	EXPECT(urel_win_fence(w, 0), UREL_WIN_ERR_PEER);
	printf("rank %d: PSCW among the survivors completed\n", me);
}

static void survivor_part(struct urel_win *w, int64_t *mem, pid_t victim_pid)
{
	const int64_t one = 1, val = me + 1;
	int next = (me + 1) % (n - 1), prev = (me + n - 2) % (n - 1);
	struct urel_win_req *req, *vreq = NULL;
	int64_t old, want, vold = -1;
	int ret;

	if (me == 0) {
		EXPECT(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, victim, 0), 0);
		EXPECT(urel_win_accumulate(w, &one, 1, UREL_WIN_INT64, victim, W_ACC, UREL_WIN_SUM),
		       0);
		EXPECT(urel_win_flush(w, victim), 0);
		/* Tell the others that we hold it (a no-check lock: no grant needed). */
		for (int r = 1; r < n - 1; r++) {
			EXPECT(urel_win_lock(w, UREL_WIN_LOCK_SHARED, r, UREL_WIN_MODE_NOCHECK), 0);
			EXPECT(urel_win_put(w, &one, sizeof(one), r, W_HELD), 0);
			EXPECT(urel_win_unlock(w, r), 0);
		}
		EXPECT(urel_win_fetch_and_op(w, &one, &old, UREL_WIN_INT64, victim, W_GO,
					     UREL_WIN_SUM),
		       0);
	} else {
		while (!__atomic_load_n(&mem[W_HELD], __ATOMIC_ACQUIRE))
			nap();
		/* The go signal needs no lock grant: a no-check epoch, the kernel's atomic. */
		EXPECT(urel_win_lock_all(w, UREL_WIN_MODE_NOCHECK), 0);
		EXPECT(urel_win_fetch_and_op(w, &one, &old, UREL_WIN_INT64, victim, W_GO,
					     UREL_WIN_SUM),
		       0);
		EXPECT(urel_win_unlock_all(w), 0);
		/* Rank 0 holds the victim's exclusive lock: this waits until the victim dies. */
		EXPECT(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, victim, 0), UREL_WIN_ERR_PEER);
		printf("rank %d: the lock waiting at the dead rank failed\n", me);
	}
	if (me == 0) {
		while (!process_gone(victim_pid))
			nap();
		printf("rank %d: the victim is gone\n", me);
		/* Not known dead yet: a request it will never answer, waited for later. */
		ret = urel_win_rget_accumulate(w, &one, &vold, 1, UREL_WIN_INT64, victim, W_ACC,
					       UREL_WIN_SUM, &vreq);
		CHECK(ret == 0 || ret == UREL_WIN_ERR_PEER);
		ret = urel_win_accumulate(w, &one, 1, UREL_WIN_INT64, victim, W_ACC, UREL_WIN_SUM);
		CHECK(ret == 0 || ret == UREL_WIN_ERR_PEER);
		if (!ret)
			EXPECT(urel_win_flush(w, victim), UREL_WIN_ERR_PEER);
		/* Reported once: what was lost with the victim no longer fails flushes of others.
		 */
		EXPECT(urel_win_flush_all(w), 0);
		EXPECT(urel_win_unlock(w, victim), UREL_WIN_ERR_PEER);
		printf("rank %d: flush and unlock at the dead rank failed\n", me);
		EXPECT(urel_win_lock(w, UREL_WIN_LOCK_SHARED, victim, 0), UREL_WIN_ERR_PEER);
		live_beside_dead(w, vreq);
	}
	/* Known dead now: operations to it fail at once, the window's state unchanged. */
	EXPECT(urel_win_lock_all(w, UREL_WIN_MODE_NOCHECK), 0);
	EXPECT(urel_win_put(w, &one, sizeof(one), victim, W_ACC), UREL_WIN_ERR_PEER);
	EXPECT(urel_win_fetch_and_op(w, &one, &old, UREL_WIN_INT64, victim, W_GO, UREL_WIN_SUM),
	       UREL_WIN_ERR_PEER);
	/* Request-based ones too: refused, no request handed out. */
	req = NULL;
	EXPECT(urel_win_rget(w, &old, sizeof(old), victim, W_GO, &req), UREL_WIN_ERR_PEER);
	EXPECT(urel_win_rget_accumulate(w, &one, &old, 1, UREL_WIN_INT64, victim, W_ACC,
					UREL_WIN_SUM, &req),
	       UREL_WIN_ERR_PEER);
	CHECK(!req);
	/* ... and to a living rank they work. */
	EXPECT(urel_win_rget_accumulate(w, &one, &old, 1, UREL_WIN_INT64, next, W_RINGACC + 1,
					UREL_WIN_SUM, &req),
	       0);
	EXPECT(urel_win_req_wait(req), 0);
	EXPECT(urel_win_unlock_all(w), 0);
	/* The survivors' ring still works: lock the next, accumulate, unlock (complete there). */
	for (int i = 0; i < 5; i++) {
		EXPECT(urel_win_lock(w, i % 2 ? UREL_WIN_LOCK_SHARED : UREL_WIN_LOCK_EXCLUSIVE,
				     next, 0),
		       0);
		EXPECT(urel_win_accumulate(w, &val, 1, UREL_WIN_INT64, next, W_RINGACC,
					   UREL_WIN_SUM),
		       0);
		EXPECT(urel_win_unlock(w, next), 0);
	}
	/* Our predecessor's five accumulates land here (applied by our progress thread). */
	want = 5 * (int64_t)(prev + 1);
	while (__atomic_load_n(&mem[W_RINGACC], __ATOMIC_ACQUIRE) != want)
		nap();
	printf("rank %d: the survivors' window still works\n", me);
	survivors_pscw(w, mem);
}

/*
 * The survivors meet (point to point: a barrier would wait for the dead),
 * so that none frees its window while another still talks to it.
 */
static void survivors_meet(struct urel_group *g)
{
	struct urel_msg_req *req;
	int token = 0;

	if (me == 0) {
		for (int r = 1; r < n - 1; r++) {
			EXPECT(urel_group_irecv(g, r, &token, sizeof(token), 7, &req), 0);
			EXPECT(urel_msg_wait(req, NULL), 0);
		}
		for (int r = 1; r < n - 1; r++) {
			EXPECT(urel_group_isend(g, r, &token, sizeof(token), 8, 0, &req), 0);
			EXPECT(urel_msg_wait(req, NULL), 0);
		}
		return;
	}
	EXPECT(urel_group_isend(g, 0, &token, sizeof(token), 7, 0, &req), 0);
	EXPECT(urel_msg_wait(req, NULL), 0);
	EXPECT(urel_group_irecv(g, 0, &token, sizeof(token), 8, &req), 0);
	EXPECT(urel_msg_wait(req, NULL), 0);
}

int main(void)
{
	const char *ip = getenv("UREL_ADDR") ? getenv("UREL_ADDR") : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct urel_device *dev;
	struct urel_group *world;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_win *w;
	struct urel_ep *ep;
	int64_t *mem, v;
	pid_t *pids;
	pid_t mine = getpid();

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(inet_pton(AF_INET, ip, &sin.sin_addr) == 1);
	CHECK(urel_device_open(NULL, &dev) == 0);
	CHECK(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep) == 0);
	CHECK(urel_msg_open(ep, NULL, &m) == 0);
	CHECK(urel_job_init_pmix(m, &job) == 0);
	CHECK(urel_group_world(job, UREL_TAG_1, &world) == 0);
	me = urel_group_rank(world);
	n = urel_group_size(world);
	victim = n - 1;
	CHECK(n >= 3 && n <= 8);
	pids = calloc((size_t)n, sizeof(*pids));
	CHECK(pids);
	EXPECT(urel_group_allgather(world, &mine, sizeof(mine), pids), 0);
	EXPECT(urel_win_allocate(world, W_WORDS * sizeof(int64_t), sizeof(int64_t), (void **)&mem,
				 &w),
	       0);
	/* Everyone alive: a checked fence round first. */
	v = 1000 + me;
	EXPECT(urel_win_fence(w, UREL_WIN_MODE_NOPRECEDE), 0);
	EXPECT(urel_win_put(w, &v, sizeof(v), (me + 1) % n, W_FENCE), 0);
	EXPECT(urel_win_fence(w, UREL_WIN_MODE_NOSUCCEED), 0);
	CHECK(mem[W_FENCE] == 1000 + (me + n - 1) % n);
	if (me == victim)
		victim_part(w, mem);
	survivor_part(w, mem, pids[victim]);
	survivors_meet(world);
	EXPECT(urel_win_free(w), UREL_WIN_ERR_PEER);
	printf("rank %d: ok\n", me);
	free(pids);
	urel_group_free(world);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return 0;
}
