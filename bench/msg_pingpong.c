/* SPDX-License-Identifier: MIT */
/*
 * Tagged ping-pong (usnicrel_msg.h): one-way latency of the messaging
 * layer by size, through its three protocols (tiny on the command channel,
 * eager on the data channel, rendezvous by RDMA get), to set beside
 * bench/urel_pingpong.c (the core's own sends, same method and output).
 *
 *   msg_pingpong -s -b BIND_IP -r PEER_IP [-p PORT] [-m busy|block] [-M MAX] [-1]
 *   msg_pingpong -c SERVER_IP -b BIND_IP [-p PORT] [-m busy|block]
 *                [-S 8,256,...] [-n ITERS] [-w WARMUP] [-1]
 *
 * -1 creates the endpoint UREL_EP_SERIAL: the bench is one thread, so the
 * library takes none of its endpoint's locks.
 *
 * Both endpoints bind PORT on their own address and open tagged messaging
 * on it. The server echoes every message (up to -M bytes, default 16 MiB)
 * and exits on a control message (or after 120 s without traffic). The
 * client, for each size, pre-posts the receive of the echo, sends, and
 * waits for both; it prints
 *
 *   msg_pp mode=busy size=8 proto=tiny iters=N lat_avg_us=X lat_med_us=Y
 *
 * with urel_pingpong's definitions (round trip / 2) and iteration counts
 * (half from 4 KiB, a tenth from 64 KiB, a hundredth from 1 MiB; warm-up
 * scaled alike). "busy" spins on urel_msg_test(); "block" calls
 * urel_msg_wait() (which spins, then sleeps on the device).
 */
#include "bench_msg.h"

#include <getopt.h>

static int busy = 1;

static int server(struct bench_msg *bm, size_t cap)
{
	char *buf = malloc(cap);

	if (!buf)
		return 1;
	for (;;) {
		struct urel_msg_req *r, *s;
		struct urel_msg_status st;
		int ret;

		/* Data and control tags alike (bit 1 ignored). */
		ret = urel_msg_irecv(bm->m, bm->b.peer, buf, cap, BENCH_TAG_DATA, 3, &r);
		if (ret < 0)
			bench_die("urel_msg_irecv", ret);
		ret = bench_msg_wait(r, &st, busy, 120000);
		if (ret == -ETIME) {
			fprintf(stderr, "msg_pingpong server: idle timeout\n");
			return 1;
		}
		/*
		 * -ETIMEDOUT: the client never answered our keepalives' handshake
		 * (retry_limit timeouts, some 15 s: a client slow to start) or died.
		 */
		if (ret < 0)
			bench_die("receive from the client", ret);
		if (st.tag == BENCH_TAG_CTL)
			break;
		ret = urel_msg_isend(bm->m, bm->b.peer, buf, st.received, BENCH_TAG_DATA, 0, &s);
		if (ret < 0)
			bench_die("urel_msg_isend", ret);
		ret = bench_msg_wait(s, NULL, busy, 60000);
		if (ret < 0)
			bench_die("echo", ret);
	}
	free(buf);
	return 0;
}

/* One size; returns 0 or -ETIME (no echo within 30 s). */
static int measure(struct bench_msg *bm, char *sbuf, char *rbuf, size_t size, int cnt, int warmup,
		   uint64_t *rtt)
{
	uint64_t total = 0;

	memset(sbuf, 0x5a, size);
	for (int i = -warmup; i < cnt; i++) {
		uint64_t t0 = bench_now_ns();
		struct urel_msg_req *r, *s;
		struct urel_msg_status st;
		int ret;

		ret = urel_msg_irecv(bm->m, bm->b.peer, rbuf, size, BENCH_TAG_DATA, 0, &r);
		if (ret < 0)
			bench_die("urel_msg_irecv", ret);
		ret = urel_msg_isend(bm->m, bm->b.peer, sbuf, size, BENCH_TAG_DATA, 0, &s);
		if (ret < 0)
			bench_die("urel_msg_isend", ret);
		ret = bench_msg_wait(r, &st, busy, 30000);
		if (ret == -ETIME)
			return ret;
		if (ret < 0)
			bench_die("receive", ret);
		ret = bench_msg_wait(s, NULL, busy, 30000);
		if (ret == -ETIME)
			return ret;
		if (ret < 0)
			bench_die("send", ret);
		if (i >= 0) {
			rtt[i] = bench_now_ns() - t0;
			total += rtt[i];
		}
		if (st.received != size) {
			fprintf(stderr, "msg_pingpong: echo of %zu bytes came back with %zu\n",
				size, st.received);
			exit(1);
		}
	}
	qsort(rtt, (size_t)cnt, sizeof(*rtt), bench_cmp_u64);
	printf("msg_pp mode=%s size=%zu proto=%s iters=%d lat_avg_us=%.2f lat_med_us=%.2f\n",
	       busy ? "busy" : "block", size, bench_msg_proto(bm, size), cnt,
	       (double)total / cnt / 2000.0, (double)rtt[cnt / 2] / 2000.0);
	fflush(stdout);
	return 0;
}

static int client(struct bench_msg *bm, const size_t *sizes, int nsizes, int iters, int warmup)
{
	size_t max = 1;
	uint64_t *rtt = calloc((size_t)iters, sizeof(*rtt));
	char *sbuf, *rbuf;
	int ret = 0;

	for (int s = 0; s < nsizes; s++)
		max = sizes[s] > max ? sizes[s] : max;
	sbuf = malloc(max);
	rbuf = malloc(max);
	if (!rtt || !sbuf || !rbuf)
		return 1;
	for (int s = 0; s < nsizes && !ret; s++) {
		int div = sizes[s] >= (1 << 20) ? 100
			  : sizes[s] >= 65536	? 10
			  : sizes[s] >= 4096	? 2
						: 1;
		int cnt = iters / div, w = warmup / div;

		if (measure(bm, sbuf, rbuf, sizes[s], cnt < 3 ? 3 : cnt, w < 1 ? 1 : w, rtt) < 0) {
			fprintf(stderr, "msg_pingpong: no echo of %zu bytes for 30 s\n", sizes[s]);
			ret = 1;
		}
	}
	bench_msg_ctl(bm, 1, 0);
	free(rtt);
	free(sbuf);
	free(rbuf);
	return ret;
}

static void usage(void)
{
	fprintf(stderr, "usage: msg_pingpong (-s -r PEER_IP | -c SERVER_IP) -b BIND_IP [-p PORT] "
			"[-m busy|block] [-M MAX] [-S SIZES] [-n ITERS] [-w WARMUP] [-1]\n"
			"  -1: the endpoint is UREL_EP_SERIAL (one thread: no library lock)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *peer_ip = NULL;
	const char *size_list = "8,256,4096,16384,65536,1048576";
	unsigned int port = 18800;
	int is_server = 0, iters = 1000, warmup = 50, opt, nsizes, ret;
	size_t sizes[64], cap = 16 << 20;
	struct bench_msg bm;

	while ((opt = getopt(argc, argv, "sc:r:b:p:m:M:S:n:w:1")) != -1) {
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
		case 'M':
			cap = strtoul(optarg, NULL, 0);
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
		case '1':
			bench_ep_flags = UREL_EP_SERIAL;
			break;
		default:
			usage();
		}
	}
	if (!bind_ip || !peer_ip || iters < 1 || warmup < 0 || port == 0 || cap < 1)
		usage();
	nsizes = bench_parse_sizes(size_list, sizes, 64);
	if (nsizes < 1)
		usage();
	bench_msg_open(&bm, bind_ip, peer_ip, port);
	ret = is_server ? server(&bm, cap) : client(&bm, sizes, nsizes, iters, warmup);
	/* urel_msg_close() waits until the peer acknowledged what we sent. */
	bench_msg_close(&bm);
	return ret;
}
