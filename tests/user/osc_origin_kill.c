// SPDX-License-Identifier: MIT
/*
 * In-VM test, launched by mpirun (tests/user/mpirun_osc_kill.sh): an origin
 * dies holding a lock, and the target gives the lock to the next origin
 * instead of keeping it for ever.
 *
 * Three ranks, eager locks. Rank 2 locks rank 0 exclusively (through rank
 * 0's lock word unless UREL_WIN_FAST_LOCK=0, and says which), adds 1 to a
 * word there (flushed), tells rank 1 by a message and kills itself. Rank 1
 * then asks for the same lock: rank 0's progress thread pings the holder
 * while rank 1 waits, finds it dead, releases its lock and grants rank 1,
 * which adds 10 and unlocks. Rank 0 checks the word is 11 and that its
 * counters show one lock reclaimed. Rank 1 then finds the dead rank itself
 * (a lock there fails with UREL_WIN_ERR_PEER), the two meet by messages and
 * free the window (UREL_WIN_ERR_PEER: a member is dead). Each survivor
 * prints "rank R: ok" only when all of that held.
 *
 * With UREL_WIN_FAST_SHARED=1 (the default), rank 1 then opens a lock_all
 * epoch with the dead rank still in the window: a put to it fails, one to rank 0 (its
 * shared lock taken on rank 0's lock word) must not, and unlock_all must
 * give rank 0's word back, which rank 0 shows by locking itself
 * exclusively and finding the put.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <usnicrel_win.h>

enum {
	W_FENCE = 0,
	W_ACC = 1,
	W_ALL = 2,
	W_WORDS = 4,
	TAG_HELD = 5,
	TAG_DONE = 6,
	TAG_ALL = 7
};

static int me;

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

/* Point-to-point word from @src (tag @tag), waited for. */
static void recv_word(struct urel_group *g, int src, int tag)
{
	struct urel_msg_req *req;
	int word = 0;

	EXPECT(urel_group_irecv(g, src, &word, sizeof(word), tag, &req), 0);
	EXPECT(urel_msg_wait(req, NULL), 0);
}

static void send_word(struct urel_group *g, int dst, int tag)
{
	struct urel_msg_req *req;
	int word = me;

	EXPECT(urel_group_isend(g, dst, &word, sizeof(word), tag, 0, &req), 0);
	EXPECT(urel_msg_wait(req, NULL), 0);
}

int main(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const int64_t one = 1, ten = 10;
	struct urel_win_stats st;
	struct urel_device *dev;
	struct urel_group *g;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_win *w;
	struct urel_ep *ep;
	int64_t *mem, v, got;
	const char *fs = getenv("UREL_WIN_FAST_SHARED");
	bool fast_shared = !fs || !*fs || atoi(fs) != 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr) == 1);
	CHECK(urel_device_open(NULL, &dev) == 0);
	CHECK(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep) == 0);
	CHECK(urel_msg_open(ep, NULL, &m) == 0);
	CHECK(urel_job_init_pmix(m, &job) == 0);
	CHECK(urel_group_world(job, UREL_TAG_1, &g) == 0);
	me = urel_group_rank(g);
	CHECK(urel_group_size(g) == 3);
	EXPECT(urel_win_allocate(g, W_WORDS * sizeof(int64_t), sizeof(int64_t), (void **)&mem, &w),
	       0);
	v = 100 + me;
	EXPECT(urel_win_fence(w, UREL_WIN_MODE_NOPRECEDE), 0);
	EXPECT(urel_win_put(w, &v, sizeof(v), (me + 1) % 3, W_FENCE), 0);
	EXPECT(urel_win_fence(w, UREL_WIN_MODE_NOSUCCEED), 0);
	CHECK(mem[W_FENCE] == 100 + (me + 2) % 3);

	if (me == 2) {
		EXPECT(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0), 0);
		EXPECT(urel_win_accumulate(w, &one, 1, UREL_WIN_INT64, 0, W_ACC, UREL_WIN_SUM), 0);
		EXPECT(urel_win_flush(w, 0), 0);
		EXPECT(urel_win_stats(w, &st), 0);
		/* Through the lock word the target's manager does not know us: the word names us.
		 */
		printf("rank 2: holding the lock %s\n",
		       st.lock_fast ? "through the word" : "from the manager");
		send_word(g, 1, TAG_HELD);
		printf("rank 2: killing myself holding rank 0's lock\n");
		raise(SIGKILL);
	}
	if (me == 1) {
		recv_word(g, 2, TAG_HELD);
		/* Granted only once rank 0 took the lock back from the dead. */
		EXPECT(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0), 0);
		EXPECT(urel_win_fetch_and_op(w, &ten, &got, UREL_WIN_INT64, 0, W_ACC, UREL_WIN_SUM),
		       0);
		CHECK(got == 1);
		EXPECT(urel_win_unlock(w, 0), 0);
		printf("rank 1: got the lock the dead rank held\n");
		send_word(g, 0, TAG_DONE);
		/* Rank 1 finds the dead rank itself: locks there fail. */
		EXPECT(urel_win_lock(w, UREL_WIN_LOCK_SHARED, 2, 0), UREL_WIN_ERR_PEER);
		recv_word(g, 0, TAG_DONE);
		if (fast_shared) {
			int acc, flushed;

			/* Known dead by a send (the word's swaps only fail): as a ping finds it. */
			EXPECT(urel_win_lock(w, UREL_WIN_LOCK_SHARED, 2, UREL_WIN_MODE_NOCHECK), 0);
			acc = urel_win_accumulate(w, &one, 1, UREL_WIN_INT64, 2, W_ACC,
						  UREL_WIN_SUM);
			flushed = urel_win_unlock(w, 2);
			CHECK(acc == UREL_WIN_ERR_PEER || flushed == UREL_WIN_ERR_PEER);
			v = 77;
			EXPECT(urel_win_lock_all(w, 0), 0);
			EXPECT(urel_win_put(w, &v, sizeof(v), 2, W_ALL), UREL_WIN_ERR_PEER);
			EXPECT(urel_win_put(w, &v, sizeof(v), 0, W_ALL), 0);
			EXPECT(urel_win_unlock_all(w), 0);
			printf("rank 1: lock_all beside the dead rank\n");
			send_word(g, 0, TAG_ALL);
		}
	} else {
		recv_word(g, 1, TAG_DONE);
		CHECK(__atomic_load_n(&mem[W_ACC], __ATOMIC_ACQUIRE) == 11);
		EXPECT(urel_win_stats(w, &st), 0);
		CHECK(st.locks_reclaimed == 1);
		printf("rank 0: the lock of the dead rank went to rank 1\n");
		send_word(g, 1, TAG_DONE);
		if (fast_shared) {
			recv_word(g, 1, TAG_ALL);
			/* Granted only if rank 1's reader bit left our word. */
			EXPECT(urel_win_lock(w, UREL_WIN_LOCK_EXCLUSIVE, 0, 0), 0);
			CHECK(mem[W_ALL] == 77);
			EXPECT(urel_win_unlock(w, 0), 0);
			printf("rank 0: lock_all's word given back\n");
		}
	}
	EXPECT(urel_win_free(w), UREL_WIN_ERR_PEER);
	printf("rank %d: ok\n", me);
	urel_group_free(g);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return 0;
}
