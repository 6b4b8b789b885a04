/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libusnicrel benchmarks (bench/urel_*.c). */
#ifndef BENCH_UREL_H
#define BENCH_UREL_H

#include "bench_util.h"

#include <usnicrel.h>

/* Control messages travel as immediate data of messages with no other use. */
#define BENCH_IMM_DATA 0ull
#define BENCH_IMM_QUIT 0x9017ull

struct bench_ep {
	struct urel_device *dev;
	struct urel_ep *ep;
	struct urel_ep_info info;
	urel_peer_t peer;
};

static inline void bench_die(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, urel_strerror(err));
	exit(1);
}

/* urel_ep_create_flags()' flags for bench_ep_open(): UREL_EP_SERIAL for a one-thread bench. */
static unsigned int bench_ep_flags;

/*
 * Open the device, bind an endpoint to bind_ip:port and insert the peer at
 * peer_ip:port (both ends use the same port, each on its own address: the
 * kernel drops messages from senders not in the address vector). @attr may
 * be NULL (the module's ring sizes).
 */
static inline void bench_ep_open(struct bench_ep *b, const char *bind_ip, const char *peer_ip,
				 unsigned int port, const struct urel_ep_attr *attr)
{
	struct sockaddr_in me, peer;
	int ret;

	if (bench_addr(&me, bind_ip, port) < 0 || bench_addr(&peer, peer_ip, port) < 0) {
		fprintf(stderr, "bad address %s or %s\n", bind_ip, peer_ip);
		exit(2);
	}
	ret = urel_device_open(NULL, &b->dev);
	if (ret < 0)
		bench_die("urel_device_open", ret);
	ret = urel_ep_create_flags(b->dev, (struct sockaddr *)&me, sizeof(me), attr, bench_ep_flags,
				   &b->ep);
	if (ret < 0)
		bench_die("urel_ep_create_flags", ret);
	ret = urel_ep_query(b->ep, &b->info);
	if (ret < 0)
		bench_die("urel_ep_query", ret);
	ret = urel_av_insert(b->ep, (struct sockaddr *)&peer, sizeof(peer), &b->peer);
	if (ret < 0)
		bench_die("urel_av_insert", ret);
}

static inline void bench_ep_close(struct bench_ep *b)
{
	urel_ep_destroy(b->ep);
	urel_device_close(b->dev);
}

/*
 * Take one completion into *c, spinning (busy) or sleeping in
 * urel_device_wait() (blocking); returns 0, or -ETIMEDOUT after timeout_ms.
 */
static inline int bench_next(struct bench_ep *b, struct urel_completion *c, int busy,
			     int timeout_ms)
{
	uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	unsigned int polls = 0;

	for (;;) {
		int n = urel_ep_poll_cq(b->ep, c, 1);

		if (n < 0)
			bench_die("urel_ep_poll_cq", n);
		if (n == 1)
			return 0;
		if (busy) {
			if (bench_spin_expired(&polls, deadline))
				return -ETIMEDOUT;
			continue;
		}
		if (bench_now_ns() > deadline)
			return -ETIMEDOUT;
		n = urel_device_wait(b->dev, 100);
		if (n < 0 && n != -EINTR)
			bench_die("urel_device_wait", n);
	}
}

/* A failed send completion is a broken run: the transport is reliable. */
static inline void bench_check_send(const struct urel_completion *c)
{
	if (c->opcode != UREL_OP_RECV && c->status)
		bench_die("send completion", c->status);
}

/*
 * Send, reaping completions while the send queue or the staging area is
 * full; receives met on the way are handed back to the kernel.
 */
static inline void bench_send(struct bench_ep *b, unsigned int chan, const void *buf, size_t len,
			      uint64_t imm, unsigned int flags)
{
	for (;;) {
		struct urel_completion c;
		int ret = urel_ep_send(b->ep, b->peer, chan, buf, len, imm, NULL, flags);

		if (ret == 0)
			return;
		if (ret != -EAGAIN && ret != -ENOBUFS)
			bench_die("urel_ep_send", ret);
		if (bench_next(b, &c, 0, 10000) < 0)
			bench_die("send queue stuck", -ETIMEDOUT);
		/*
		 * Take every completion that is there, as an application that
		 * met back-pressure would: one at a time, each freed slot
		 * would be posted and rung alone, and the doorbells that
		 * UREL_POST_MORE batches would carry one send each.
		 */
		do {
			bench_check_send(&c);
			if (c.opcode == UREL_OP_RECV)
				urel_ep_release_recv(b->ep, c.buf);
		} while (urel_ep_poll_cq(b->ep, &c, 1) == 1);
	}
}

/*
 * Wait up to @timeout_ms for a message with immediate data @imm, copying its
 * payload to @out; other receives are handed back. 0, -ETIMEDOUT, or
 * -EPROTO when its length is not @len.
 */
static inline int bench_await(struct bench_ep *b, uint64_t imm, void *out, size_t len,
			      int timeout_ms)
{
	for (;;) {
		struct urel_completion c;

		if (bench_next(b, &c, 0, timeout_ms) < 0)
			return -ETIMEDOUT;
		bench_check_send(&c);
		if (c.opcode != UREL_OP_RECV)
			continue;
		if (c.imm == imm && c.len == len && len)
			memcpy(out, c.data, len);
		urel_ep_release_recv(b->ep, c.buf);
		if (c.imm == imm)
			return c.len == len ? 0 : -EPROTO;
	}
}

/* An endpoint counter from debugfs (the sysfs copy may not exist yet); -1 if unreadable. */
static inline long long bench_counter(const struct bench_ep *b, const char *name)
{
	char path[96], key[64];
	long long val, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/counters", b->info.debug_id);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &val) == 2) {
		if (!strcmp(key, name))
			found = val;
	}
	fclose(f);
	return found;
}

#endif
