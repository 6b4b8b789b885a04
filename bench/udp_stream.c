/* SPDX-License-Identifier: MIT */
/*
 * Raw UDP stream: the bandwidth and message-rate floor of any UDP transport.
 *
 *   udp_stream -s -b BIND_IP [-p PORT]
 *   udp_stream -c SERVER_IP -b BIND_IP [-p PORT] [-S 64,65536] [-t SECONDS]
 *              [-W WINDOW]
 *
 * The sender streams datagrams of each size for -t seconds. It is paced by the
 * receiver, so that it measures what the receiver can take rather than how
 * fast a sender can overrun it: every datagram carries a sequence number, the
 * receiver returns a credit with the highest sequence seen every WINDOW/4
 * datagrams, and the sender keeps at most WINDOW datagrams beyond the last
 * credit (a credit missing for 200 ms is presumed lost and the window slides
 * on, so loss never stalls the stream). There is no retransmission: under loss
 * this reports the delivered fraction, which is not a reliable transport's
 * goodput. The receiver times from the first to the last datagram it got.
 * One line per size:
 *
 *   udp_stream size=65536 wire=65507 sent=S recv=R loss_pct=L MBps=B Mmsgps=M
 *              credits=C stalls=T
 *
 * MBps is delivered payload in 10^6 bytes per second; sizes above 65507 B are
 * sent as 65507 B datagrams (wire=) and MBps counts the bytes on the wire.
 */
#include "bench_util.h"

#include <getopt.h>
#include <poll.h>
#include <sys/time.h>
#include <unistd.h>

enum {
	T_DATA = 1,
	T_END = 2,
	T_STATS = 3,
	T_CREDIT = 4,
	T_QUIT = 5
};

/* The first 8 bytes of every data datagram (sizes below 8 are not allowed). */
struct hdr {
	uint32_t seq;
	uint16_t run;
	uint8_t type;
	uint8_t pad;
};

struct stats {
	struct hdr h;
	uint64_t msgs, bytes, ns, credits;
};

static void send_to(int fd, const void *b, size_t n, const struct sockaddr_in *to)
{
	if (sendto(fd, b, n, 0, (const struct sockaddr *)to, sizeof(*to)) < 0 && errno != EAGAIN &&
	    errno != ENOBUFS)
		perror("sendto");
}

static int server(int fd, char *buf)
{
	struct stats st = { 0 };
	struct sockaddr_in from;
	uint64_t first = 0, last = 0;
	uint32_t high = 0, credit_every = 1, since = 0;
	int run = -1;

	/* One blocking recvfrom per datagram; 120 s of silence ends the server. */
	struct timeval idle = { .tv_sec = 120 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
	for (;;) {
		socklen_t alen = sizeof(from);
		struct hdr h;
		ssize_t n;

		n = recvfrom(fd, buf, BENCH_UDP_MAX, 0, (struct sockaddr *)&from, &alen);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			fprintf(stderr, "udp_stream server: idle timeout\n");
			return 1;
		}
		if (n < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, buf, sizeof(h));
		if (h.type == T_QUIT)
			return 0;
		if (h.type == T_END) {
			st.h = (struct hdr){ .run = h.run, .type = T_STATS };
			st.ns = last - first;
			send_to(fd, &st, sizeof(st), &from);
			continue;
		}
		if (h.type != T_DATA)
			continue;
		if (h.run != run) {
			run = h.run;
			memset(&st, 0, sizeof(st));
			high = 0;
			since = 0;
			first = bench_now_ns();
			/* The pad byte carries log2 of the credit interval. */
			credit_every = 1u << (h.pad & 15);
		}
		last = bench_now_ns();
		st.msgs++;
		st.bytes += (uint64_t)n;
		if ((int32_t)(h.seq - high) > 0)
			high = h.seq;
		if (++since >= credit_every) {
			struct hdr c = { .seq = high, .run = h.run, .type = T_CREDIT };

			since = 0;
			st.credits++;
			send_to(fd, &c, sizeof(c), &from);
		}
	}
}

static int client(int fd, char *buf, const struct sockaddr_in *srv, const size_t *sizes, int nsizes,
		  double secs, unsigned int window)
{
	for (int s = 0; s < nsizes; s++) {
		size_t wire = sizes[s] > BENCH_UDP_MAX ? BENCH_UDP_MAX : sizes[s];
		unsigned int w = window, shift = 0;
		uint32_t seq = 0, credit = 0;
		uint64_t end, stalls = 0, credits = 0;
		struct stats st;
		int got = 0;

		/* Keep a window's worth of data within 2 MiB of socket buffer. */
		while (w > 1 && (uint64_t)w * wire > (2u << 20))
			w /= 2;
		while ((1u << (shift + 1)) <= w / 4)
			shift++;
		memset(buf, 0x5a, wire);
		end = bench_now_ns() + (uint64_t)(secs * 1e9);
		while (bench_now_ns() < end) {
			struct hdr h = { .seq = seq,
					 .run = (uint16_t)s,
					 .type = T_DATA,
					 .pad = (uint8_t)shift };
			struct pollfd p = { .fd = fd, .events = POLLIN };
			ssize_t n;

			if (seq - credit < w) {
				memcpy(buf, &h, sizeof(h));
				if (sendto(fd, buf, wire, 0, (const struct sockaddr *)srv,
					   sizeof(*srv)) == (ssize_t)wire)
					seq++;
			}
			/* Drain credits; wait for one only when the window is full. */
			while ((n = recv(fd, &h, sizeof(h), MSG_DONTWAIT)) >= 0 ||
			       (seq - credit >= w && errno == EAGAIN)) {
				if (n < 0) {
					if (poll(&p, 1, 200) == 0) {
						stalls++;
						credit = seq - w + 1;
						break;
					}
					continue;
				}
				if (n == (ssize_t)sizeof(h) && h.type == T_CREDIT &&
				    h.run == (uint16_t)s && (int32_t)(h.seq + 1 - credit) > 0) {
					credit = h.seq + 1;
					credits++;
				}
			}
		}
		/* Ask for the receiver's counts until they arrive. */
		for (int tries = 0; tries < 50 && !got; tries++) {
			struct hdr h = { .run = (uint16_t)s, .type = T_END };
			uint64_t until = bench_now_ns() + 200000000ull;

			send_to(fd, &h, sizeof(h), srv);
			while (!got && bench_now_ns() < until) {
				struct pollfd p = { .fd = fd, .events = POLLIN };

				if (poll(&p, 1, 50) <= 0)
					continue;
				if (recv(fd, &st, sizeof(st), 0) == (ssize_t)sizeof(st) &&
				    st.h.type == T_STATS && st.h.run == (uint16_t)s)
					got = 1;
			}
		}
		if (!got) {
			fprintf(stderr, "udp_stream: no statistics from the receiver\n");
			return 1;
		}
		double us = st.ns ? (double)st.ns / 1000.0 : 1.0;

		printf("udp_stream size=%zu wire=%zu sent=%u recv=%llu loss_pct=%.3f MBps=%.2f "
		       "Mmsgps=%.4f credits=%llu stalls=%llu window=%u\n",
		       sizes[s], wire, seq, (unsigned long long)st.msgs,
		       seq ? 100.0 * (double)(seq - st.msgs) / seq : 0.0, (double)st.bytes / us,
		       (double)st.msgs / us, (unsigned long long)st.credits,
		       (unsigned long long)stalls, w);
		fflush(stdout);
	}
	for (int i = 0; i < 3; i++) {
		struct hdr h = { .type = T_QUIT };

		send_to(fd, &h, sizeof(h), srv);
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_stream (-s | -c SERVER_IP) -b BIND_IP [-p PORT] [-S SIZES] "
			"[-t SECONDS] [-W WINDOW]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *srv_ip = NULL, *size_list = "64,1472,65536";
	unsigned int port = 18700, window = 256;
	int is_server = 0, opt, nsizes, fd, ret;
	double secs = 2.0;
	size_t sizes[64];
	char *buf;

	while ((opt = getopt(argc, argv, "sc:b:p:S:t:W:")) != -1) {
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
		case 'S':
			size_list = optarg;
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'W':
			window = (unsigned int)atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!bind_ip || is_server == !!srv_ip || secs <= 0 || window < 1)
		usage();
	nsizes = bench_parse_sizes(size_list, sizes, 64);
	if (nsizes < 1)
		usage();
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] < sizeof(struct hdr))
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
		ret = client(fd, buf, &srv, sizes, nsizes, secs, window);
	}
	close(fd);
	free(buf);
	return ret;
}
