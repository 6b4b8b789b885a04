// SPDX-License-Identifier: MIT
/*
 * In-VM test: tagged messaging while about one allocation in four fails, in
 * both ranks. Rank 0 streams messages of every protocol (tiny, eager,
 * rendezvous, some synchronous) to rank 1, which receives them with ANY_TAG,
 * half pre-posted and half late (so they queue as unexpected). A call may
 * say -ENOMEM and is then retried; a message is never lost, reordered or
 * corrupted, and the receiver's counters show arrivals that were deferred
 * for lack of memory, none dropped. Then again with every rendezvous
 * registered piecewise (UREL_MSG_RNDV_WINDOW).
 */
#include <stdlib.h>
#include <string.h>

#include "urt.h"
#include "urt_job.h"
#include "urt_nomem.h"

/* Messages per run; the piecewise run is shorter. */
static unsigned int count = 600;
#define BIG (96 * 1024)

static const uint32_t sizes[] = { 0, 8, 200, 3000, 20000, BIG };
static uint32_t msg_len(unsigned int i)
{
	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* Retry a call refused for lack of memory, progressing in between. */
#define RETRY(m, call)                                                                             \
	({                                                                                         \
		int ret_;                                                                          \
		while ((ret_ = (call)) == -ENOMEM)                                                 \
			urel_msg_progress(m);                                                      \
		ret_;                                                                              \
	})

static int wait_req(struct urel_msg *m, struct urel_msg_req *r, struct urel_msg_status *st)
{
	int ret;

	for (;;) {
		ret = urel_msg_test(r, st);
		if (ret)
			return ret < 0 ? ret : 0;
		urel_msg_progress(m);
	}
}

static void sender(struct urt_job *j)
{
	static uint8_t buf[4][BIG];
	struct urel_msg_req *req[4] = { 0 };
	struct urel_msg_status st;

	for (unsigned int i = 0; i < count; i++) {
		unsigned int slot = i % 4;
		unsigned int flags = i % 7 == 3 ? UREL_MSG_SYNC : 0;

		if (req[slot])
			URT_CHECK_EQ(wait_req(j->m, req[slot], &st), 0);
		urt_fill(buf[slot], i, msg_len(i));
		URT_CHECK_EQ(RETRY(j->m, urel_msg_isend(j->m, j->peer[1], buf[slot], msg_len(i), i,
							flags, &req[slot])),
			     0);
	}
	for (unsigned int s = 0; s < 4; s++) {
		URT_CHECK_EQ(wait_req(j->m, req[s], &st), 0);
		URT_CHECK_EQ(st.error, 0);
	}
}

static void check_one(unsigned int i, const uint8_t *buf, const struct urel_msg_status *st)
{
	URT_CHECK_EQ(st->error, 0);
	URT_CHECK_EQ(st->tag, i);
	URT_CHECK_EQ(st->len, msg_len(i));
	URT_CHECK_EQ(st->received, msg_len(i));
	URT_CHECK_EQ(urt_verify(buf, i, msg_len(i)), 0);
}

static void receiver(struct urt_job *j)
{
	static uint8_t buf[2][BIG];
	struct urel_msg_status st;
	struct urel_msg_stats ms;

	for (unsigned int i = 0; i < count; i += 2) {
		struct urel_msg_req *pre;

		/* i is posted before it arrives, i + 1 after. */
		URT_CHECK_EQ(
			RETRY(j->m, urel_msg_irecv(j->m, j->peer[0], buf[0], BIG, 0, ~0ULL, &pre)),
			0);
		URT_CHECK_EQ(wait_req(j->m, pre, &st), 0);
		check_one(i, buf[0], &st);
		for (int k = 0; k < 50; k++)
			urel_msg_progress(j->m);
		URT_CHECK_EQ(
			RETRY(j->m, urel_msg_recv(j->m, j->peer[0], buf[1], BIG, 0, ~0ULL, &st)),
			0);
		check_one(i + 1, buf[1], &st);
		if (urt_failures) {
			fprintf(stderr, "receiver: first failure at message %u\n", i);
			return;
		}
	}
	URT_CHECK_EQ(urel_msg_stats(j->m, &ms), 0);
	printf("vm_nomem_msg: receiver deferred %llu arrivals, dropped %llu, %llu allocations "
	       "refused\n",
	       (unsigned long long)ms.deferred, (unsigned long long)ms.dropped,
	       (unsigned long long)urt_nomem_failed);
	/* The failure path ran, and lost nothing. */
	URT_CHECK(ms.deferred > 0);
	URT_CHECK_EQ(ms.dropped, 0);
}

static void run(struct urt_job *j)
{
	urt_nomem_seed((uint64_t)j->rank + 1);
	__atomic_store_n(&urt_nomem_armed, 1, __ATOMIC_RELAXED);
	if (j->rank == 0)
		sender(j);
	else
		receiver(j);
	__atomic_store_n(&urt_nomem_armed, 0, __ATOMIC_RELAXED);
}

int main(void)
{
	if (urt_job_run(2, NULL, run, 500))
		urt_failures++;
	/* Again with rendezvous registered piecewise: a failed allocation only delays a window. */
	setenv("UREL_MSG_RNDV_WINDOW", "16384", 1);
	count = 180;
	if (urt_job_run(2, NULL, run, 500))
		urt_failures++;
	return urt_done("vm_nomem_msg");
}
