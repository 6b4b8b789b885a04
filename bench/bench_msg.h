/* SPDX-License-Identifier: MIT */
/* Helpers shared by the tagged-messaging benchmarks (bench/msg_*.c). */
#ifndef BENCH_MSG_H
#define BENCH_MSG_H

#include "bench_urel.h"

#include <usnicrel_msg.h>

/* Tags: data, and the control messages (their kind in the immediate data). */
#define BENCH_TAG_DATA 1ull
#define BENCH_TAG_CTL 2ull

struct bench_msg {
	struct bench_ep b; /* the endpoint, the peer in its address vector */
	struct urel_msg *m;
	struct urel_msg_attr attr; /* the limits in effect */
};

/* bench_ep_open() (the peer inserted), then tagged messaging on the endpoint. */
static inline void bench_msg_open(struct bench_msg *bm, const char *bind_ip, const char *peer_ip,
				  unsigned int port)
{
	int ret;

	bench_ep_open(&bm->b, bind_ip, peer_ip, port, NULL);
	ret = urel_msg_open(bm->b.ep, NULL, &bm->m);
	if (ret < 0)
		bench_die("urel_msg_open", ret);
	ret = urel_msg_query(bm->m, &bm->attr);
	if (ret < 0)
		bench_die("urel_msg_query", ret);
}

static inline void bench_msg_close(struct bench_msg *bm)
{
	urel_msg_close(bm->m);
	bench_ep_close(&bm->b);
}

/* Which protocol a message of @len bytes takes. */
static inline const char *bench_msg_proto(const struct bench_msg *bm, size_t len)
{
	return len <= bm->attr.tiny_max ? "tiny" : len <= bm->attr.eager_max ? "eager" : "rndv";
}

/*
 * Complete @r: busy spins on urel_msg_test() (which makes progress), else
 * urel_msg_wait() (spins, then sleeps on the device). Returns the request's
 * error, or -ETIME after @timeout_ms (busy only; @r is then leaked): not
 * -ETIMEDOUT, which is the request's own error when the kernel declared
 * its peer dead.
 */
static inline int bench_msg_wait(struct urel_msg_req *r, struct urel_msg_status *st, int busy,
				 int timeout_ms)
{
	uint64_t deadline;
	unsigned int polls = 0;

	if (!busy)
		return urel_msg_wait(r, st);
	deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		int ret = urel_msg_test(r, st);

		if (ret < 0)
			bench_die("urel_msg_test", ret);
		if (ret == 1)
			return st ? st->error : 0;
		if (bench_spin_expired(&polls, deadline))
			return -ETIME;
	}
}

/* A control message (no payload): its kind and argument in the immediate data. */
static inline void bench_msg_ctl(struct bench_msg *bm, uint64_t kind, uint64_t arg)
{
	struct urel_msg_req *r;
	int ret = urel_msg_isend_data(bm->m, bm->b.peer, NULL, 0, BENCH_TAG_CTL, kind << 48 | arg,
				      0, &r);

	if (ret < 0)
		bench_die("urel_msg_isend_data", ret);
	ret = urel_msg_wait(r, NULL);
	if (ret < 0)
		bench_die("control send", ret);
}

#endif
