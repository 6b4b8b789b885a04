// SPDX-License-Identifier: MIT
/*
 * The urel provider under FI_THREAD_SAFE: several client threads share one
 * endpoint and one CQ, each echoing tagged messages off a server, every
 * thread reading the CQ (a completion may be another thread's: it is handed
 * over through the operation's context). Sends alternate fi_tinject (no
 * completion) and fi_tsend (one completion, exactly once). Every echo must
 * come back once, with its tag and bytes; nothing may go missing while
 * threads poll an empty queue concurrently with posts and completions.
 *
 * Usage: fi_threads -s ADDR PORT PEER PEERPORT | -c ADDR PORT PEER PEERPORT
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_tagged.h>

#include "fi_check.h"

#define THREADS 4
#define ROUNDS 400
#define MSG 24 /* bytes of one message: thread, round, a check word */
#define SERVER_RX 32 /* receives the server keeps posted */
#define STOP_TAG 0x7fffffffffffffffULL

static int fails; /* atomic */

static void fail(const char *what, int t, int i)
{
	__atomic_add_fetch(&fails, 1, __ATOMIC_RELAXED);
	printf("FAIL: thread %d round %d: %s\n", t, i, what);
}

static uint64_t check_word(uint64_t t, uint64_t i)
{
	return (t * 0x9e3779b97f4a7c15ULL) ^ (i * 0xc2b2ae3d27d4eb4fULL);
}

static void setup(const char *node, const char *port, const char *pnode, const char *pport)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		DIE("fi_allocinfo");
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->fabric_attr->prov_name = strdup("urel");
	ret = fi_getinfo(FI_VERSION(1, 17), node, port, FI_SOURCE, hints, &info);
	if (ret)
		DIE("fi_getinfo: %s", fi_strerror(-ret));
	fi_freeinfo(hints);
	if (info->domain_attr->threading != FI_THREAD_SAFE)
		DIE("threading %d, FI_THREAD_SAFE expected", info->domain_attr->threading);
	if (info->tx_attr->inject_size < MSG)
		DIE("inject_size %zu", info->tx_attr->inject_size);
	TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
	TRY(fi_domain(fabric, info, &domain, NULL));
	open_ep(FI_CQ_FORMAT_TAGGED, pnode, pport);
}

/* An operation's context: whoever reads its completion marks it done. */
struct op {
	struct fi_context ctx; /* first: the provider may use it */
	int done; /* completions seen (atomic) */
	uint64_t tag;
	size_t len;
};

/* Read one completion, if any, and hand it to its operation; -1 on an error entry. */
static int poll_once(void)
{
	struct fi_cq_tagged_entry c;
	ssize_t n = fi_cq_read(cq, &c, 1);

	if (n == 1) {
		struct op *o = c.op_context;

		if (!o)
			return -1; /* nothing of ours completes without a context */
		o->tag = c.tag;
		o->len = c.len;
		__atomic_add_fetch(&o->done, 1, __ATOMIC_RELEASE);
		return 1;
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry e = { 0 };

		if (fi_cq_readerr(cq, &e, 0) == 1)
			printf("error completion: %s\n", fi_strerror(e.err));
		return -1;
	}
	if (n != -FI_EAGAIN)
		DIE("fi_cq_read: %s", fi_strerror((int)-n));
	return 0;
}

/* Poll (taking whatever completes) until @o completed; false after 120 s or an error. */
static bool wait_op(struct op *o)
{
	double end = now() + 120;

	while (!__atomic_load_n(&o->done, __ATOMIC_ACQUIRE)) {
		if (poll_once() < 0 || now() > end)
			return false;
	}
	return true;
}

#define POST(call)                                                                                 \
	do {                                                                                       \
		ssize_t r_;                                                                        \
		while ((r_ = (call)) == -FI_EAGAIN)                                                \
			poll_once();                                                               \
		if (r_)                                                                            \
			DIE("%s: %s (%zd)", #call, fi_strerror((int)-r_), r_);                     \
	} while (0)

static void *client_thread(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		uint64_t out[MSG / 8] = { t, (uint64_t)i, check_word(t, (uint64_t)i) };
		uint64_t in[MSG / 8] = { 0 };
		uint64_t tag = t << 32 | (uint64_t)i;
		struct op rx = { .done = 0 }, tx = { .done = 0 };

		POST(fi_trecv(ep, in, sizeof(in), NULL, peer, tag, 0, &rx));
		if (i % 2)
			POST(fi_tsend(ep, out, sizeof(out), NULL, peer, tag, &tx));
		else
			POST(fi_tinject(ep, out, sizeof(out), peer, tag));
		if (!wait_op(&rx)) {
			fail("no echo", (int)t, i);
			return NULL;
		}
		if (rx.tag != tag || rx.len != sizeof(in) || memcmp(in, out, sizeof(in)))
			fail("wrong echo", (int)t, i);
		if (i % 2 && !wait_op(&tx)) {
			fail("no send completion", (int)t, i);
			return NULL;
		}
		/* Exactly once: a late duplicate would land on the next round's stack. */
		if (__atomic_load_n(&rx.done, __ATOMIC_ACQUIRE) != 1 ||
		    __atomic_load_n(&tx.done, __ATOMIC_ACQUIRE) != (i % 2))
			fail("completion seen more than once", (int)t, i);
	}
	return NULL;
}

static int client(const char *node, const char *port, const char *pnode, const char *pport)
{
	pthread_t th[THREADS];
	uint64_t stop = 0;

	setup(node, port, pnode, pport);
	for (uintptr_t t = 0; t < THREADS; t++) {
		if (pthread_create(&th[t], NULL, client_thread, (void *)t))
			DIE("pthread_create");
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	/* Nothing left over: every completion was taken by its own round. */
	if (poll_once() != 0)
		fail("a completion left over", -1, -1);
	POST(fi_tinject(ep, &stop, sizeof(stop), peer, STOP_TAG));
	teardown();
	printf("fi_threads client (%d threads x %d echoes): %s\n", THREADS, ROUNDS,
	       fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}

/* One thread: echo every message back under its tag until STOP_TAG. */
static int serve(const char *node, const char *port, const char *pnode, const char *pport)
{
	static uint64_t buf[SERVER_RX][MSG / 8];
	static struct op rx[SERVER_RX];
	double end;
	long echoed = 0;
	bool stop = false;

	setup(node, port, pnode, pport);
	for (int k = 0; k < SERVER_RX; k++)
		POST(fi_trecv(ep, buf[k], sizeof(buf[k]), NULL, peer, 0, ~0ULL, &rx[k]));
	end = now() + 600;
	while (!stop) {
		int got = poll_once();

		if (got < 0)
			DIE("server: error completion");
		if (now() > end)
			DIE("server: no stop after %ld echoes", echoed);
		for (int k = 0; got && k < SERVER_RX; k++) {
			if (!__atomic_load_n(&rx[k].done, __ATOMIC_ACQUIRE))
				continue;
			if (rx[k].tag == STOP_TAG) {
				stop = true;
				break;
			}
			POST(fi_tinject(ep, buf[k], rx[k].len, peer, rx[k].tag));
			echoed++;
			rx[k].done = 0;
			POST(fi_trecv(ep, buf[k], sizeof(buf[k]), NULL, peer, 0, ~0ULL, &rx[k]));
		}
	}
	if (echoed != (long)THREADS * ROUNDS)
		printf("FAIL: server echoed %ld messages, expected %d\n", echoed, THREADS * ROUNDS);
	teardown();
	printf("fi_threads server: %ld echoes\n", echoed);
	return echoed == (long)THREADS * ROUNDS ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "-s"))
		return serve(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 6 && !strcmp(argv[1], "-c"))
		return client(argv[2], argv[3], argv[4], argv[5]);
	fprintf(stderr, "usage: %s -s|-c ADDR PORT PEER PEERPORT\n", argv[0]);
	return 2;
}
