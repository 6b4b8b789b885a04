/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel stream: bandwidth, message rate and ACK cost of this transport,
 * to set beside bench/udp_stream.c (same method, same output format).
 *
 *   urel_stream -s -b BIND_IP -r PEER_IP [-p PORT]
 *   urel_stream -c SERVER_IP -b BIND_IP [-p PORT] [-S 64,65536] [-t SECONDS]
 *               [-W STAGING_BYTES]
 *
 * For each size the sender streams messages on the data channel for -t
 * seconds, as fast as its send queue allows: the window is the send queue
 * (sq_entries messages) and the staging area (-W, default the module's),
 * both freed as the receiver acknowledges. Doorbells are batched (UREL_POST_MORE, a flush every 16
 * messages). The receiver times from the first to the last message it got,
 * like udp_stream's, and returns its counts and its endpoint's acks_standalone
 * counter delta; the sender reads its tx_data_packets delta (first
 * transmissions, debugfs) and prints:
 *
 *   urel_stream size=65536 sent=S recv=R loss_pct=0.000 MBps=B Mmsgps=M
 *               acks_per_data=A window=W
 *
 * loss_pct is the undelivered fraction (0 for a reliable transport; under
 * netem loss MBps is the goodput). acks_per_data is "n/a" when debugfs is
 * not readable.
 */
#include "bench_urel.h"

#include <getopt.h>

enum {
	IMM_START = 0x5747,
	IMM_END = 0xe4d,
	IMM_STATS = 0x57a7
};

#define FLUSH_EVERY 16

struct stats {
	uint64_t msgs, bytes, ns;
	int64_t acks; /* acks_standalone delta, -1 if unreadable */
};

static int server(struct bench_ep *b)
{
	struct stats st = { 0 };
	uint64_t first = 0, last = 0;
	long long acks0 = -1;

	for (;;) {
		struct urel_completion c;

		if (bench_next(b, &c, 0, 120000) < 0) {
			fprintf(stderr, "urel_stream server: idle timeout\n");
			return 1;
		}
		bench_check_send(&c);
		if (c.opcode != UREL_OP_RECV)
			continue;
		urel_ep_release_recv(b->ep, c.buf);
		switch (c.imm) {
		case BENCH_IMM_DATA:
			last = bench_now_ns();
			if (!st.msgs)
				first = last;
			st.msgs++;
			st.bytes += c.len;
			break;
		case IMM_START:
			memset(&st, 0, sizeof(st));
			acks0 = bench_counter(b, "acks_standalone");
			bench_send(b, UREL_CHAN_DATA, NULL, 0, IMM_START, 0);
			break;
		case IMM_END: {
			long long acks1 = bench_counter(b, "acks_standalone");

			st.ns = last - first;
			st.acks = acks0 >= 0 && acks1 >= 0 ? acks1 - acks0 : -1;
			bench_send(b, UREL_CHAN_DATA, &st, sizeof(st), IMM_STATS, 0);
			break;
		}
		case BENCH_IMM_QUIT:
			return 0;
		}
	}
}

static int client(struct bench_ep *b, const size_t *sizes, int nsizes, double secs)
{
	char *buf = malloc(65536);

	if (!buf)
		return 1;
	memset(buf, 0x5a, 65536);
	for (int s = 0; s < nsizes; s++) {
		uint64_t sent = 0, end;
		long long tx0, tx1;
		struct stats st;
		char apd[32] = "n/a";
		double us;

		if (sizes[s] > b->info.max_msg[UREL_CHAN_DATA] || sizes[s] > 65536) {
			fprintf(stderr, "urel_stream: %zu B exceeds max_msg\n", sizes[s]);
			continue;
		}
		bench_send(b, UREL_CHAN_DATA, NULL, 0, IMM_START, 0);
		if (bench_await(b, IMM_START, NULL, 0, 10000) < 0) {
			fprintf(stderr, "urel_stream: the receiver did not answer\n");
			return 1;
		}
		tx0 = bench_counter(b, "tx_data_packets");
		end = bench_now_ns() + (uint64_t)(secs * 1e9);
		while (bench_now_ns() < end) {
			sent++;
			bench_send(b, UREL_CHAN_DATA, buf, sizes[s], BENCH_IMM_DATA,
				   sent % FLUSH_EVERY ? UREL_POST_MORE : 0);
		}
		bench_send(b, UREL_CHAN_DATA, NULL, 0, IMM_END, 0);
		if (bench_await(b, IMM_STATS, &st, sizeof(st), 10000) < 0) {
			fprintf(stderr, "urel_stream: no statistics from the receiver\n");
			return 1;
		}
		tx1 = bench_counter(b, "tx_data_packets");
		if (st.acks >= 0 && tx0 >= 0 && tx1 > tx0)
			snprintf(apd, sizeof(apd), "%.4f", (double)st.acks / (double)(tx1 - tx0));
		us = st.ns ? (double)st.ns / 1000.0 : 1.0;
		printf("urel_stream size=%zu sent=%llu recv=%llu loss_pct=%.3f MBps=%.2f "
		       "Mmsgps=%.6f acks_per_data=%s window=%u\n",
		       sizes[s], (unsigned long long)sent, (unsigned long long)st.msgs,
		       sent ? 100.0 * (double)(sent - st.msgs) / (double)sent : 0.0,
		       (double)st.bytes / us, (double)st.msgs / us, apd, b->info.sq_entries);
		fflush(stdout);
	}
	bench_send(b, UREL_CHAN_DATA, NULL, 0, BENCH_IMM_QUIT, 0);
	free(buf);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: urel_stream (-s -r PEER_IP | -c SERVER_IP) -b BIND_IP [-p PORT] "
			"[-S SIZES] [-t SECONDS] [-W STAGING_BYTES]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *peer_ip = NULL, *size_list = "64,1472,65536";
	unsigned int port = 18900;
	int is_server = 0, opt, nsizes, ret;
	double secs = 2.0;
	struct urel_ep_attr attr = { 0 };
	struct bench_ep b;
	size_t sizes[64];

	while ((opt = getopt(argc, argv, "sc:r:b:p:S:t:W:")) != -1) {
		switch (opt) {
		case 's':
			is_server = 1;
			break;
		case 'c':
		case 'r':
			peer_ip = optarg;
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
			attr.staging_size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (!bind_ip || !peer_ip || secs <= 0 || port == 0)
		usage();
	nsizes = bench_parse_sizes(size_list, sizes, 64);
	if (nsizes < 1)
		usage();
	bench_ep_open(&b, bind_ip, peer_ip, port, &attr);
	ret = is_server ? server(&b) : client(&b, sizes, nsizes, secs);
	if (!is_server) {
		/* Let the quit message reach the receiver before the endpoint goes. */
		struct urel_completion c;

		while (bench_next(&b, &c, 0, 1000) == 0)
			if (c.opcode == UREL_OP_RECV)
				urel_ep_release_recv(b.ep, c.buf);
	}
	bench_ep_close(&b);
	return ret;
}
