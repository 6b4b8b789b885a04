/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel mixed workload: goodput and wasted retransmissions of this
 * transport when message sizes and channels vary, as an application's do.
 *
 *   urel_mixed -s -b BIND_IP -r PEER_IP [-p PORT]
 *   urel_mixed -c SERVER_IP -b BIND_IP [-p PORT] [-t SECONDS] [-R SEED]
 *
 * For -t seconds the sender posts messages of random sizes from 0 to 64 KiB
 * (at most the channel's max_msg), one in four on the command channel, the
 * rest on the data channel, as fast as its send queue and staging allow;
 * the sequence depends only on -R, so runs under different conditions or
 * modules send the same messages. It then waits for every send to complete
 * (each acknowledged, so delivered), which ends the timed interval, and
 * asks the receiver for what it got and its rx_duplicate counter delta.
 * It prints:
 *
 *   urel_mixed msgs=N bytes=B secs=S MBps=G data_packets=P retx_timeout=T
 *              retx_fast=F retx_probe=R rx_duplicate=D wasted_pct=W
 *              cwnd_fast_recoveries=E cwnd_timeouts=O rnr_acks_received=N
 *              cwnd_losses_spared=L
 *
 * data_packets and retx_* are the sender's counter deltas (first
 * transmissions, and retransmissions by kind); rx_duplicate is the
 * receiver's: packets it already had. wasted_pct = 100 * rx_duplicate /
 * (all retransmissions): the share of retransmissions that were not needed.
 * A counter the module lacks prints -1.
 */
#include "bench_urel.h"

#include <getopt.h>

enum {
	IMM_START = 0x3a11,
	IMM_END = 0x3e0d,
	IMM_STATS = 0x3a7a,
	IMM_MIXED = 0x3d
};

#define FLUSH_EVERY 16
#define MAX_SIZE 65536

struct rx_stats {
	uint64_t msgs, bytes;
	int64_t dups; /* rx_duplicate delta, -1 if unreadable */
};

static long long delta(long long a, long long b)
{
	return a >= 0 && b >= 0 ? b - a : -1;
}

static int server(struct bench_ep *b)
{
	struct rx_stats st = { 0 };
	long long dup0 = -1;

	for (;;) {
		struct urel_completion c;

		if (bench_next(b, &c, 0, 120000) < 0) {
			fprintf(stderr, "urel_mixed server: idle timeout\n");
			return 1;
		}
		bench_check_send(&c);
		if (c.opcode != UREL_OP_RECV)
			continue;
		urel_ep_release_recv(b->ep, c.buf);
		switch (c.imm) {
		case IMM_MIXED:
			st.msgs++;
			st.bytes += c.len;
			break;
		case IMM_START:
			memset(&st, 0, sizeof(st));
			dup0 = bench_counter(b, "rx_duplicate");
			bench_send(b, UREL_CHAN_DATA, NULL, 0, IMM_START, 0);
			break;
		case IMM_END:
			st.dups = delta(dup0, bench_counter(b, "rx_duplicate"));
			bench_send(b, UREL_CHAN_DATA, &st, sizeof(st), IMM_STATS, 0);
			break;
		case BENCH_IMM_QUIT:
			return 0;
		}
	}
}

/* xorshift64*: the same sizes and channels for the same seed. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* The context of the timed sends, apart from the control messages'. */
static char mixed_ctx;

/* Reap one completion; returns 1 for a timed send's, 0 otherwise. */
static int reap(struct bench_ep *b)
{
	struct urel_completion c;

	if (bench_next(b, &c, 0, 30000) < 0)
		bench_die("urel_mixed: no completion", -ETIMEDOUT);
	bench_check_send(&c);
	if (c.opcode == UREL_OP_RECV) {
		urel_ep_release_recv(b->ep, c.buf);
		return 0;
	}
	return c.context == &mixed_ctx;
}

static const char *const counters[] = {
	"tx_data_packets",	"retx_timeout",	 "retx_fast",	      "retx_probe",
	"cwnd_fast_recoveries", "cwnd_timeouts", "rnr_acks_received", "cwnd_losses_spared"
};
#define NR_COUNTERS (sizeof(counters) / sizeof(counters[0]))

static int client(struct bench_ep *b, double secs, uint64_t seed)
{
	long long c0[NR_COUNTERS], d[NR_COUNTERS];
	uint64_t posted = 0, done = 0, bytes = 0, t0, t1, end, rnd = seed | 1;
	struct rx_stats st;
	long long retx;
	char wasted[32] = "n/a";
	char *buf = malloc(MAX_SIZE);

	if (!buf)
		return 1;
	memset(buf, 0xa5, MAX_SIZE);
	bench_send(b, UREL_CHAN_DATA, NULL, 0, IMM_START, 0);
	if (bench_await(b, IMM_START, NULL, 0, 30000) < 0) {
		fprintf(stderr, "urel_mixed: the receiver did not answer\n");
		return 1;
	}
	for (size_t i = 0; i < NR_COUNTERS; i++)
		c0[i] = bench_counter(b, counters[i]);
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	while (bench_now_ns() < end) {
		uint64_t r = next_rand(&rnd);
		unsigned int chan = (r & 3) ? UREL_CHAN_DATA : UREL_CHAN_CMD;
		size_t max = b->info.max_msg[chan] < MAX_SIZE ? b->info.max_msg[chan] : MAX_SIZE;
		size_t len = (size_t)((r >> 8) % (max + 1));

		for (;;) {
			int ret =
				urel_ep_send(b->ep, b->peer, chan, buf, len, IMM_MIXED, &mixed_ctx,
					     (posted + 1) % FLUSH_EVERY ? UREL_POST_MORE : 0);

			if (ret == 0)
				break;
			if (ret != -EAGAIN && ret != -ENOBUFS)
				bench_die("urel_ep_send", ret);
			urel_ep_flush(b->ep);
			done += (uint64_t)reap(b);
		}
		posted++;
		bytes += len;
	}
	urel_ep_flush(b->ep);
	while (done < posted)
		done += (uint64_t)reap(b);
	t1 = bench_now_ns();
	for (size_t i = 0; i < NR_COUNTERS; i++)
		d[i] = delta(c0[i], bench_counter(b, counters[i]));
	bench_send(b, UREL_CHAN_DATA, NULL, 0, IMM_END, 0);
	if (bench_await(b, IMM_STATS, &st, sizeof(st), 30000) < 0) {
		fprintf(stderr, "urel_mixed: no statistics from the receiver\n");
		return 1;
	}
	if (st.msgs != posted || st.bytes != bytes) {
		fprintf(stderr, "urel_mixed: sent %llu msgs %llu B, received %llu msgs %llu B\n",
			(unsigned long long)posted, (unsigned long long)bytes,
			(unsigned long long)st.msgs, (unsigned long long)st.bytes);
		return 1;
	}
	retx = d[1] >= 0 && d[2] >= 0 && d[3] >= 0 ? d[1] + d[2] + d[3] : -1;
	if (retx > 0 && st.dups >= 0)
		snprintf(wasted, sizeof(wasted), "%.2f", 100.0 * (double)st.dups / (double)retx);
	else if (retx == 0 && st.dups >= 0)
		snprintf(wasted, sizeof(wasted), "0.00");
	printf("urel_mixed msgs=%llu bytes=%llu secs=%.3f MBps=%.3f data_packets=%lld "
	       "retx_timeout=%lld retx_fast=%lld retx_probe=%lld rx_duplicate=%lld "
	       "wasted_pct=%s cwnd_fast_recoveries=%lld cwnd_timeouts=%lld "
	       "rnr_acks_received=%lld cwnd_losses_spared=%lld\n",
	       (unsigned long long)posted, (unsigned long long)bytes, (double)(t1 - t0) / 1e9,
	       (double)bytes / ((double)(t1 - t0) / 1e3), d[0], d[1], d[2], d[3],
	       (long long)st.dups, wasted, d[4], d[5], d[6], d[7]);
	fflush(stdout);
	bench_send(b, UREL_CHAN_DATA, NULL, 0, BENCH_IMM_QUIT, 0);
	free(buf);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: urel_mixed (-s -r PEER_IP | -c SERVER_IP) -b BIND_IP [-p PORT] "
			"[-t SECONDS] [-R SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *peer_ip = NULL;
	unsigned int port = 18950;
	int is_server = 0, opt, ret;
	uint64_t seed = 1;
	double secs = 2.0;
	struct bench_ep b;

	while ((opt = getopt(argc, argv, "sc:r:b:p:t:R:")) != -1) {
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
		case 't':
			secs = atof(optarg);
			break;
		case 'R':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (!bind_ip || !peer_ip || secs <= 0 || port == 0)
		usage();
	bench_ep_open(&b, bind_ip, peer_ip, port, NULL);
	ret = is_server ? server(&b) : client(&b, secs, seed);
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
