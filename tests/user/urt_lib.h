/* SPDX-License-Identifier: MIT */
/*
 * In-VM test helpers for tests of libusnicrel itself.
 */
#ifndef URT_LIB_H
#define URT_LIB_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <usnicrel.h>

static inline struct sockaddr_in urt_sin(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ip, &sin.sin_addr);
	return sin;
}

static inline uint16_t urt_ep_port(struct urel_ep *ep)
{
	struct urel_ep_info info;

	if (urel_ep_query(ep, &info))
		return 0;
	return ntohs(((struct sockaddr_in *)&info.addr)->sin_port);
}

static inline long long urt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Poll @ep until @n completions arrived or @timeout_ms passed; returns how many. */
static inline int urt_poll_n(struct urel_device *dev, struct urel_ep *ep,
			     struct urel_completion *out, int n, int timeout_ms)
{
	long long end = urt_now_ms() + timeout_ms;
	int got = 0, ret;

	while (got < n) {
		ret = urel_ep_poll_cq(ep, out + got, (unsigned int)(n - got));
		if (ret < 0)
			return ret;
		got += ret;
		if (got == n || urt_now_ms() >= end)
			break;
		if (!ret)
			urel_device_wait(dev, 10);
	}
	return got;
}

/* Deterministic payload byte @i of message @seq of @len bytes. */
static inline uint8_t urt_byte(uint64_t seq, uint32_t len, uint32_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + len);
}

static inline void urt_fill(uint8_t *buf, uint64_t seq, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		buf[i] = urt_byte(seq, len, i);
}

static inline int urt_verify(const void *data, uint64_t seq, uint32_t len)
{
	const uint8_t *p = data;

	for (uint32_t i = 0; i < len; i++) {
		if (p[i] != urt_byte(seq, len, i))
			return -1;
	}
	return 0;
}

#endif /* URT_LIB_H */
