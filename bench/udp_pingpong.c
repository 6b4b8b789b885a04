/* SPDX-License-Identifier: MIT */
/*
 * Raw UDP ping-pong: the latency floor of any UDP transport on a netdev.
 *
 *   udp_pingpong -s -b BIND_IP [-p PORT] [-m busy|block]
 *   udp_pingpong -c SERVER_IP -b BIND_IP [-p PORT] [-m busy|block]
 *                [-S 8,64,...] [-n ITERS] [-w WARMUP]
 *
 * -n counts the iterations of sizes below 4 KiB; 4 KiB and up get half as
 * many, 64 KiB and up a tenth (as bench/run gives the other tools).
 *
 * The server echoes every datagram back to its sender and exits on a
 * zero-length datagram (or after 120 s without traffic). The client prints one
 * line per size:
 *
 *   udp_pp mode=busy size=8 wire=8 iters=N lat_avg_us=X lat_med_us=Y lost=L
 *
 * lat_avg_us is the mean round trip / 2 over the timed iterations (the same
 * definition as fi_pingpong's usec/xfer and perftest's t_avg), lat_med_us the
 * median round trip / 2. Sizes above 65507 B (the IPv4 UDP payload limit) are
 * sent as 65507 B datagrams and reported with wire=65507. "busy" spins on
 * recv(MSG_DONTWAIT); "block" sleeps in recv(). A reply missing for 1 s counts
 * as lost and the ping is sent again.
 */
#include "bench_util.h"

#include <getopt.h>
#include <poll.h>
#include <unistd.h>

enum {
	MODE_BUSY,
	MODE_BLOCK
};

static int mode = MODE_BUSY;

/* Receive one datagram into buf; returns its length, or -1 after timeout_ms. */
static ssize_t rx(int fd, void *buf, size_t cap, struct sockaddr_in *from, int timeout_ms)
{
	socklen_t alen = sizeof(*from);
	uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	unsigned int polls = 0;

	for (;;) {
		ssize_t n;

		if (mode == MODE_BUSY) {
			n = recvfrom(fd, buf, cap, MSG_DONTWAIT, (struct sockaddr *)from, &alen);
			if (n >= 0)
				return n;
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return -1;
			if (bench_spin_expired(&polls, deadline))
				return -1;
			continue;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);

		if (r == 0)
			return -1;
		if (r < 0 && errno == EINTR)
			continue;
		n = recvfrom(fd, buf, cap, 0, (struct sockaddr *)from, &alen);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

static int server(int fd, char *buf)
{
	struct sockaddr_in from;

	for (;;) {
		ssize_t n = rx(fd, buf, BENCH_UDP_MAX, &from, 120000);

		if (n < 0) {
			fprintf(stderr, "udp_pingpong server: idle timeout\n");
			return 1;
		}
		if (n == 0)
			return 0;
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, sizeof(from)) < 0)
			perror("sendto");
	}
}

static int client(int fd, char *buf, const struct sockaddr_in *srv, const size_t *sizes, int nsizes,
		  int iters, int warmup)
{
	uint64_t *rtt = calloc((size_t)iters, sizeof(*rtt));
	struct sockaddr_in from;

	if (!rtt)
		return 1;
	for (int s = 0; s < nsizes; s++) {
		size_t wire = sizes[s] > BENCH_UDP_MAX ? BENCH_UDP_MAX : sizes[s];
		/* As bench/run does for the other tools: fewer iterations for big messages. */
		int cnt = sizes[s] >= 65536 ? iters / 10 : sizes[s] >= 4096 ? iters / 2 : iters;
		uint64_t total = 0;
		long lost = 0;

		if (cnt < 1)
			cnt = 1;

		memset(buf, 0x5a, wire);
		for (int i = -warmup; i < cnt; i++) {
			uint64_t t0 = bench_now_ns();
			ssize_t n;

			if (sendto(fd, buf, wire, 0, (const struct sockaddr *)srv, sizeof(*srv)) <
			    0) {
				perror("sendto");
				return 1;
			}
			n = rx(fd, buf, BENCH_UDP_MAX, &from, 1000);
			if (n != (ssize_t)wire) {
				if (++lost > 100) {
					fprintf(stderr, "udp_pingpong: too many lost replies\n");
					return 1;
				}
				i--;
				continue;
			}
			if (i >= 0) {
				rtt[i] = bench_now_ns() - t0;
				total += rtt[i];
			}
		}
		qsort(rtt, (size_t)cnt, sizeof(*rtt), bench_cmp_u64);
		printf("udp_pp mode=%s size=%zu wire=%zu iters=%d lat_avg_us=%.2f lat_med_us=%.2f "
		       "lost=%ld\n",
		       mode == MODE_BUSY ? "busy" : "block", sizes[s], wire, cnt,
		       (double)total / cnt / 2000.0, (double)rtt[cnt / 2] / 2000.0, lost);
		fflush(stdout);
	}
	free(rtt);
	/* Tell the server to exit; a lost datagram only leaves it to time out. */
	for (int i = 0; i < 3; i++)
		sendto(fd, buf, 0, 0, (const struct sockaddr *)srv, sizeof(*srv));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_pingpong (-s | -c SERVER_IP) -b BIND_IP [-p PORT] "
			"[-m busy|block] [-S SIZES] [-n ITERS] [-w WARMUP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *srv_ip = NULL, *size_list = "8,64,512,4096,65536";
	unsigned int port = 18600;
	int is_server = 0, iters = 1000, warmup = 50, opt, nsizes, fd, ret;
	size_t sizes[64];
	char *buf;

	while ((opt = getopt(argc, argv, "sc:b:p:m:S:n:w:")) != -1) {
		switch (opt) {
		case 's':
			is_server = 1;
			break;
		case 'c':
			srv_ip = optarg;
			break;
		case 'b':
			bind_ip = optarg;
			break;
		case 'p':
			port = (unsigned int)atoi(optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "busy"))
				mode = MODE_BUSY;
			else if (!strcmp(optarg, "block"))
				mode = MODE_BLOCK;
			else
				usage();
			break;
		case 'S':
			size_list = optarg;
			break;
		case 'n':
			iters = atoi(optarg);
			break;
		case 'w':
			warmup = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!bind_ip || is_server == !!srv_ip || iters < 1 || warmup < 0)
		usage();
	nsizes = bench_parse_sizes(size_list, sizes, 64);
	if (nsizes < 1)
		usage();
	buf = malloc(BENCH_UDP_MAX);
	if (!buf)
		return 1;
	if (is_server) {
		fd = bench_udp_socket(bind_ip, port);
		ret = server(fd, buf);
	} else {
		struct sockaddr_in srv;

		if (bench_addr(&srv, srv_ip, port) < 0)
			usage();
		fd = bench_udp_socket(bind_ip, 0);
		ret = client(fd, buf, &srv, sizes, nsizes, iters, warmup);
	}
	close(fd);
	free(buf);
	return ret;
}
