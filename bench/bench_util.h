/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the raw UDP benchmarks (bench/udp_*.c). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* The largest UDP payload over IPv4: 65535 - 20 (IP header) - 8 (UDP header). */
#define BENCH_UDP_MAX 65507

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Busy loops read the clock for their deadline only every 1024th empty poll
 * (as bench_msg.h does): in a VM without a usable TSC each read is a system
 * call and an emulated device access, dearer than the poll it would follow.
 */
static inline int bench_spin_expired(unsigned int *polls, uint64_t deadline)
{
	return !(++*polls & 1023) && bench_now_ns() > deadline;
}

/* Fill *sa from "A.B.C.D" and a port; returns 0 or -EINVAL. */
static inline int bench_addr(struct sockaddr_in *sa, const char *ip, unsigned int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

/* A UDP socket bound to ip:port with large socket buffers; exits on error. */
static inline int bench_udp_socket(const char *ip, unsigned int port)
{
	struct sockaddr_in sa;
	int buf = 4 << 20;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bench_addr(&sa, ip, port) < 0) {
		fprintf(stderr, "bad socket or address %s\n", ip);
		exit(2);
	}
	/* Best effort: the kernel clamps to rmem_max/wmem_max. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("bind");
		exit(2);
	}
	return fd;
}

/* Parse "8,64,4096" into sizes[]; returns the count, or -1 on a bad list. */
static inline int bench_parse_sizes(const char *list, size_t *sizes, int max)
{
	int n = 0;
	const char *p = list;

	while (*p && n < max) {
		char *end;
		unsigned long v = strtoul(p, &end, 0);

		if (end == p || v == 0)
			return -1;
		sizes[n++] = v;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return n;
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
