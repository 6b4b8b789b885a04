/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel ping-pong: one-way latency of this transport, to set beside
 * bench/udp_pingpong.c (same method, same output format).
 *
 *   urel_pingpong -s -b BIND_IP -r PEER_IP [-p PORT] [-m busy|block]
 *   urel_pingpong -c SERVER_IP -b BIND_IP [-p PORT] [-m busy|block]
 *                 [-C data,cmd] [-S 8,64,...] [-n ITERS] [-w WARMUP]
 *
 * Both endpoints bind PORT on their own address. The server echoes every
 * message on the channel it came in and exits on a message with immediate
 * data BENCH_IMM_QUIT (or after 120 s without traffic). The client measures
 * each channel of -C and each size (sizes above a channel's max_msg are
 * skipped) and prints:
 *
 *   urel_pp mode=busy chan=data size=8 iters=N lat_avg_us=X lat_med_us=Y
 *
 * with the same definitions and iteration counts as udp_pingpong. "busy"
 * spins on urel_ep_poll_cq(); "block" sleeps in urel_device_wait() (poll on
 * the device fd) whenever the completion queue is empty.
 */
#include "bench_urel.h"

#include <getopt.h>

static int busy = 1;

static int server(struct bench_ep *b)
{
	for (;;) {
		struct urel_completion c;

		if (bench_next(b, &c, busy, 120000) < 0) {
			fprintf(stderr, "urel_pingpong server: idle timeout\n");
			return 1;
		}
		bench_check_send(&c);
		if (c.opcode != UREL_OP_RECV)
			continue;
		if (c.imm == BENCH_IMM_QUIT) {
			urel_ep_release_recv(b->ep, c.buf);
			return 0;
		}
		/* The send copies the bytes: the buffer can go back at once. */
		bench_send(b, c.channel, c.data, c.len, BENCH_IMM_DATA, 0);
		urel_ep_release_recv(b->ep, c.buf);
	}
}

/* One size on one channel; returns 0 or -ETIMEDOUT. */
static int measure(struct bench_ep *b, unsigned int chan, char *buf, size_t size, int cnt,
		   int warmup, uint64_t *rtt)
{
	uint64_t total = 0;

	memset(buf, 0x5a, size);
	for (int i = -warmup; i < cnt; i++) {
		uint64_t t0 = bench_now_ns();
		struct urel_completion c;

		bench_send(b, chan, buf, size, BENCH_IMM_DATA, 0);
		do {
			if (bench_next(b, &c, busy, 5000) < 0)
				return -ETIMEDOUT;
			bench_check_send(&c);
		} while (c.opcode != UREL_OP_RECV);
		if (i >= 0) {
			rtt[i] = bench_now_ns() - t0;
			total += rtt[i];
		}
		if (c.len != size) {
			fprintf(stderr, "urel_pingpong: echo of %zu bytes came back with %u\n",
				size, c.len);
			exit(1);
		}
		urel_ep_release_recv(b->ep, c.buf);
	}
	qsort(rtt, (size_t)cnt, sizeof(*rtt), bench_cmp_u64);
	printf("urel_pp mode=%s chan=%s size=%zu iters=%d lat_avg_us=%.2f lat_med_us=%.2f\n",
	       busy ? "busy" : "block", chan == UREL_CHAN_CMD ? "cmd" : "data", size, cnt,
	       (double)total / cnt / 2000.0, (double)rtt[cnt / 2] / 2000.0);
	fflush(stdout);
	return 0;
}

static int client(struct bench_ep *b, const char *chans, const size_t *sizes, int nsizes, int iters,
		  int warmup)
{
	uint64_t *rtt = calloc((size_t)iters, sizeof(*rtt));
	char *buf = malloc(65536);
	int ret = 0;

	if (!rtt || !buf)
		return 1;
	for (unsigned int chan = 0; chan < UREL_NR_CHANS && !ret; chan++) {
		if (!strstr(chans, chan == UREL_CHAN_CMD ? "cmd" : "data"))
			continue;
		for (int s = 0; s < nsizes && !ret; s++) {
			/* As bench/run does for the other tools: fewer iterations for big messages.
			 */
			int cnt = sizes[s] >= 65536  ? iters / 10
				  : sizes[s] >= 4096 ? iters / 2
						     : iters;

			if (sizes[s] > b->info.max_msg[chan] || sizes[s] > 65536)
				continue;
			if (measure(b, chan, buf, sizes[s], cnt < 1 ? 1 : cnt, warmup, rtt) < 0) {
				fprintf(stderr, "urel_pingpong: no echo for 5 s\n");
				ret = 1;
			}
		}
	}
	bench_send(b, UREL_CHAN_CMD, NULL, 0, BENCH_IMM_QUIT, 0);
	free(rtt);
	free(buf);
	return ret;
}

static void usage(void)
{
	fprintf(stderr, "usage: urel_pingpong (-s -r PEER_IP | -c SERVER_IP) -b BIND_IP [-p PORT] "
			"[-m busy|block] [-C data,cmd] [-S SIZES] [-n ITERS] [-w WARMUP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *peer_ip = NULL, *chans = "data,cmd";
	const char *size_list = "8,64,512,4096,65536";
	unsigned int port = 18800;
	int is_server = 0, iters = 1000, warmup = 50, opt, nsizes, ret;
	struct bench_ep b;
	size_t sizes[64];

	while ((opt = getopt(argc, argv, "sc:r:b:p:m:C:S:n:w:")) != -1) {
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
		case 'm':
			if (strcmp(optarg, "busy") && strcmp(optarg, "block"))
				usage();
			busy = !strcmp(optarg, "busy");
			break;
		case 'C':
			chans = optarg;
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
	if (!bind_ip || !peer_ip || iters < 1 || warmup < 0 || port == 0)
		usage();
	nsizes = bench_parse_sizes(size_list, sizes, 64);
	if (nsizes < 1)
		usage();
	bench_ep_open(&b, bind_ip, peer_ip, port, NULL);
	ret = is_server ? server(&b) : client(&b, chans, sizes, nsizes, iters, warmup);
	if (!is_server) {
		/* Let the quit message reach the server before the endpoint goes. */
		struct urel_completion c;

		while (bench_next(&b, &c, 0, 1000) == 0 && c.opcode == UREL_OP_RECV)
			urel_ep_release_recv(b.ep, c.buf);
	}
	bench_ep_close(&b);
	return ret;
}
