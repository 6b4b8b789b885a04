// SPDX-License-Identifier: MIT
/*
 * In-VM test: an active-message handler is unregistered, or its dispatcher
 * put, while another thread dispatches to it. The caller frees the handler's
 * argument as soon as unregister returns (as urel_msg_close() does), so
 * unregister must wait for the dispatch under way; ASan (the tests link the
 * sanitized library) turns a use after free into a failure, and the checks
 * below catch an early return without it.
 *
 * 1. one slow handler call, unregister while it runs;
 * 2. three threads register and unregister handlers 1-3 in a loop, a fresh
 *    argument each time, while a sender floods all three and a progress
 *    thread dispatches;
 * 3. the last put while a handler runs with a second message in the same
 *    batch, which the dispatcher hands to the dispatcher it read first.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../lib/am.h"
#include "urt.h"
#include "urt_lib.h"

#define MAGIC 0x5a5aa5a5u
#define STORM_MS 2000
#define SLOW_US 100000

struct harg {
	unsigned int magic;
	unsigned int id;
	int calls; /* atomic */
	int finished; /* atomic: calls that returned */
};

static struct urel_ep *sep, *rep;
static urel_peer_t peer;
static int stop_prog, stop_storm; /* atomic */
static int entered; /* atomic: calls of the slow handler begun */
static int bad_arg; /* atomic */
static int sent, sends_done; /* atomic */
static struct urel_device *sdev;

static int slow_handler(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
			const void *payload, size_t len)
{
	struct harg *a = arg;

	(void)h;
	(void)c;
	(void)payload;
	(void)len;
	__atomic_add_fetch(&a->calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&entered, 1, __ATOMIC_RELEASE);
	usleep(SLOW_US);
	/* Freed by now if unregister did not wait: ASan reports it here. */
	if (a->magic != MAGIC)
		__atomic_add_fetch(&bad_arg, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->finished, 1, __ATOMIC_RELEASE);
	return 0;
}

static int storm_handler(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
			 const void *payload, size_t len)
{
	struct harg *a = arg;

	(void)c;
	(void)payload;
	(void)len;
	if (a->magic != MAGIC || a->id != h->handler)
		__atomic_add_fetch(&bad_arg, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->calls, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *progress_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_prog, __ATOMIC_ACQUIRE))
		if (urel_ep_progress(rep, 0) <= 0)
			sched_yield();
	return NULL;
}

static void send_done(struct urel_request *req, const struct urel_completion *c)
{
	(void)req;
	(void)c;
	__atomic_add_fetch(&sends_done, 1, __ATOMIC_RELEASE);
}

static struct urel_request send_req = { .complete = send_done };

static int send_am(unsigned int id, uint32_t seq)
{
	struct urel_am_hdr h = urel_am_hdr(id, 0, 0, seq);
	int ret;

	for (long long end = urt_now_ms() + 10000;;) {
		ret = urel_ep_send(sep, peer, UREL_CHAN_CMD, &h, sizeof(h), 0, &send_req, 0);
		if (!ret)
			__atomic_add_fetch(&sent, 1, __ATOMIC_RELEASE);
		if ((ret != -EAGAIN && ret != -ENOBUFS) || urt_now_ms() > end)
			return ret;
		urel_ep_progress(sep, 0);
	}
}

/* Wait for every send to complete: the messages sit in rep's ring then. */
static void wait_sent(void)
{
	int n = __atomic_load_n(&sent, __ATOMIC_ACQUIRE);

	for (long long end = urt_now_ms() + 10000;
	     __atomic_load_n(&sends_done, __ATOMIC_ACQUIRE) < n && urt_now_ms() < end;)
		if (urel_ep_progress(sep, 0) <= 0)
			urel_device_wait(sdev, 10);
	URT_CHECK_EQ(__atomic_load_n(&sends_done, __ATOMIC_ACQUIRE), n);
}

static void *sender_main(void *arg)
{
	uint32_t seq = 0;

	(void)arg;
	while (!__atomic_load_n(&stop_storm, __ATOMIC_ACQUIRE)) {
		/* Keep few in flight: the receiver drops what finds no buffer. */
		while (__atomic_load_n(&sent, __ATOMIC_ACQUIRE) -
			       __atomic_load_n(&sends_done, __ATOMIC_ACQUIRE) >=
		       32)
			if (urel_ep_progress(sep, 0) <= 0)
				sched_yield();
		if (send_am(1 + seq % 3, seq)) {
			URT_CHECK(0);
			break;
		}
		seq++;
	}
	return NULL;
}

struct churn {
	pthread_t thread;
	struct urel_am *am;
	unsigned int id;
	int rounds, calls;
};

static void *churn_main(void *arg)
{
	struct churn *ch = arg;

	while (!__atomic_load_n(&stop_storm, __ATOMIC_ACQUIRE)) {
		struct harg *a = calloc(1, sizeof(*a));

		if (!a)
			continue;
		a->magic = MAGIC;
		a->id = ch->id;
		URT_CHECK_EQ(urel_am_register(ch->am, ch->id, storm_handler, a), 0);
		sched_yield();
		urel_am_unregister(ch->am, ch->id);
		ch->calls += __atomic_load_n(&a->calls, __ATOMIC_RELAXED);
		/* Poisoned before the free, so a late call is seen even without ASan. */
		a->magic = 0;
		free(a);
		ch->rounds++;
	}
	return NULL;
}

static void slow_unregister(struct urel_am *am)
{
	struct harg *a = calloc(1, sizeof(*a));
	pthread_t prog;

	URT_CHECK(a != NULL);
	if (!a)
		return;
	a->magic = MAGIC;
	URT_CHECK_EQ(urel_am_register(am, UREL_AM_MSG, slow_handler, a), 0);
	__atomic_store_n(&stop_prog, 0, __ATOMIC_RELEASE);
	URT_CHECK_EQ(pthread_create(&prog, NULL, progress_main, NULL), 0);
	URT_CHECK_EQ(send_am(UREL_AM_MSG, 0), 0);
	for (long long end = urt_now_ms() + 10000;
	     !__atomic_load_n(&entered, __ATOMIC_ACQUIRE) && urt_now_ms() < end;)
		usleep(1000);
	URT_CHECK_EQ(__atomic_load_n(&entered, __ATOMIC_ACQUIRE), 1);
	urel_am_unregister(am, UREL_AM_MSG);
	/* Unregister returned: the call under way is over. */
	URT_CHECK_EQ(__atomic_load_n(&a->finished, __ATOMIC_ACQUIRE), a->calls);
	a->magic = 0;
	free(a);
	__atomic_store_n(&stop_prog, 1, __ATOMIC_RELEASE);
	pthread_join(prog, NULL);
}

static void storm(struct urel_am *am)
{
	struct churn ch[3];
	pthread_t prog, sender;
	int rounds = 0, calls = 0;

	__atomic_store_n(&stop_prog, 0, __ATOMIC_RELEASE);
	URT_CHECK_EQ(pthread_create(&prog, NULL, progress_main, NULL), 0);
	for (unsigned int i = 0; i < 3; i++) {
		ch[i] = (struct churn){ .am = am, .id = 1 + i };
		URT_CHECK_EQ(pthread_create(&ch[i].thread, NULL, churn_main, &ch[i]), 0);
	}
	URT_CHECK_EQ(pthread_create(&sender, NULL, sender_main, NULL), 0);
	usleep(STORM_MS * 1000);
	__atomic_store_n(&stop_storm, 1, __ATOMIC_RELEASE);
	pthread_join(sender, NULL);
	for (int i = 0; i < 3; i++) {
		pthread_join(ch[i].thread, NULL);
		rounds += ch[i].rounds;
		calls += ch[i].calls;
	}
	__atomic_store_n(&stop_prog, 1, __ATOMIC_RELEASE);
	pthread_join(prog, NULL);
	printf("vm_am_unregister: storm: %d registrations, %d handler calls, %d messages, %llu "
	       "dropped\n",
	       rounds, calls, __atomic_load_n(&sends_done, __ATOMIC_ACQUIRE),
	       (unsigned long long)urel_am_dropped(am));
	/* The race only exists if both happened. */
	URT_CHECK(rounds > 0);
	URT_CHECK(calls > 0);
}

static void slow_put(struct urel_am *am)
{
	static struct harg a = { .magic = MAGIC };
	pthread_t prog;

	wait_sent();
	__atomic_store_n(&entered, 0, __ATOMIC_RELEASE);
	URT_CHECK_EQ(urel_am_register(am, UREL_AM_MSG, slow_handler, &a), 0);
	/* Both in the ring before the dispatcher takes its batch. */
	URT_CHECK_EQ(send_am(UREL_AM_MSG, 1), 0);
	URT_CHECK_EQ(send_am(UREL_AM_MSG, 2), 0);
	wait_sent();
	__atomic_store_n(&stop_prog, 0, __ATOMIC_RELEASE);
	URT_CHECK_EQ(pthread_create(&prog, NULL, progress_main, NULL), 0);
	for (long long end = urt_now_ms() + 10000;
	     !__atomic_load_n(&entered, __ATOMIC_ACQUIRE) && urt_now_ms() < end;)
		usleep(1000);
	urel_am_put(am);
	/* The batch's second message reached the dispatcher before it was freed. */
	URT_CHECK_EQ(__atomic_load_n(&a.finished, __ATOMIC_ACQUIRE), 2);
	__atomic_store_n(&stop_prog, 1, __ATOMIC_RELEASE);
	pthread_join(prog, NULL);
}

int main(void)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0), other;
	struct urel_device *rdev;
	struct urel_am *am;
	urel_peer_t back;

	if (urel_device_open(NULL, &sdev) || urel_device_open(NULL, &rdev) ||
	    urel_ep_create(sdev, (struct sockaddr *)&sin, sizeof(sin), NULL, &sep) ||
	    urel_ep_create(rdev, (struct sockaddr *)&sin, sizeof(sin), NULL, &rep)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	other = urt_sin("127.0.0.1", urt_ep_port(rep));
	URT_CHECK_EQ(urel_av_insert(sep, (struct sockaddr *)&other, sizeof(other), &peer), 0);
	other = urt_sin("127.0.0.1", urt_ep_port(sep));
	URT_CHECK_EQ(urel_av_insert(rep, (struct sockaddr *)&other, sizeof(other), &back), 0);
	URT_CHECK_EQ(urel_am_get(rep, &am), 0);

	slow_unregister(am);
	storm(am);
	slow_put(am);
	URT_CHECK_EQ(__atomic_load_n(&bad_arg, __ATOMIC_RELAXED), 0);

	URT_CHECK_EQ(urel_ep_destroy(sep), 0);
	URT_CHECK_EQ(urel_ep_destroy(rep), 0);
	urel_device_close(sdev);
	urel_device_close(rdev);
	return urt_done("vm_am_unregister");
}
