/* SPDX-License-Identifier: MIT */
/*
 * Tagged stream (usnicrel_msg.h): bandwidth of the messaging layer by
 * size, up to rendezvous messages of many MiB, to set beside
 * bench/urel_stream.c (the core's own stream).
 *
 *   msg_stream -s -b BIND_IP -r PEER_IP [-p PORT]
 *   msg_stream -c SERVER_IP -b BIND_IP [-p PORT] [-S 8,65536,...] [-t SECONDS]
 *              [-N MIN_MSGS] [-W WINDOW_BYTES]
 *
 * For each size the client announces the size; the receiver allocates (and
 * touches) a window of W buffers (W = WINDOW_BYTES / size, default 16 MiB,
 * clamped to 2..64), pre-posts a receive into each and answers; every receive that
 * completes is checked (length) and posted again. The sender keeps at most
 * W sends outstanding (an eager send completes once the core took it, a
 * rendezvous send on the receiver's FIN) and sends for -t seconds (default
 * 1), at least -N messages (default 2), then says how many; the receiver
 * answers once all arrived. The time is the sender's, from the first send
 * to that answer, so it covers every byte delivered (plus one round trip):
 *
 *   msg_stream size=65536 proto=eager sent=N MBps=B Mmsgps=M window=W
 */
#include "bench_msg.h"

#include <getopt.h>

enum {
	CTL_START = 1, /* arg: size */
	CTL_READY,
	CTL_END, /* arg: messages sent */
	CTL_DONE, /* arg: messages received */
	CTL_QUIT
};

static unsigned int window_of(size_t size, size_t wbytes)
{
	size_t w = wbytes / size;

	return w < 2 ? 2 : w > 64 ? 64 : (unsigned int)w;
}

/* Receive the next control message; returns its kind, *arg its argument. */
static uint64_t ctl_recv(struct bench_msg *bm, uint64_t *arg)
{
	struct urel_msg_status st;
	int ret = urel_msg_recv(bm->m, bm->b.peer, NULL, 0, BENCH_TAG_CTL, 0, &st);

	if (ret < 0)
		bench_die("control receive", ret);
	*arg = st.data & ((1ull << 48) - 1);
	return st.data >> 48;
}

static int server(struct bench_msg *bm, size_t wbytes)
{
	for (;;) {
		struct urel_msg_req *ctl, *reqs[65];
		struct urel_msg_status st;
		uint64_t arg, kind, got = 0, want = UINT64_MAX;
		unsigned int w, idx;
		size_t size;
		char **bufs;
		int ret;

		kind = ctl_recv(bm, &arg);
		if (kind == CTL_QUIT)
			return 0;
		if (kind != CTL_START) {
			fprintf(stderr, "msg_stream server: unexpected control %llu\n",
				(unsigned long long)kind);
			return 1;
		}
		size = arg;
		w = window_of(size, wbytes);
		bufs = calloc(w, sizeof(*bufs));
		if (!bufs)
			return 1;
		for (unsigned int i = 0; i < w; i++) {
			bufs[i] = malloc(size);
			if (!bufs[i])
				return 1;
			/*
			 * Mapped before the clock starts, as the core's receive
			 * buffers are: the run measures the transfer, not the
			 * first-touch page faults of a fresh allocation.
			 */
			memset(bufs[i], 0, size);
			ret = urel_msg_irecv(bm->m, bm->b.peer, bufs[i], size, BENCH_TAG_DATA, 0,
					     &reqs[i]);
			if (ret < 0)
				bench_die("urel_msg_irecv", ret);
		}
		ret = urel_msg_irecv(bm->m, bm->b.peer, NULL, 0, BENCH_TAG_CTL, 0, &ctl);
		if (ret < 0)
			bench_die("urel_msg_irecv", ret);
		reqs[w] = ctl;
		bench_msg_ctl(bm, CTL_READY, 0);
		while (got < want) {
			ret = urel_msg_waitany(w + 1, reqs, &idx, &st);
			if (ret < 0)
				bench_die("receive", ret);
			if (idx == w) {
				if (st.data >> 48 != CTL_END) {
					fprintf(stderr, "msg_stream server: END expected\n");
					return 1;
				}
				want = st.data & ((1ull << 48) - 1);
				continue;
			}
			if (st.received != size) {
				fprintf(stderr, "msg_stream: %zu bytes arrived for %zu\n",
					st.received, size);
				return 1;
			}
			got++;
			ret = urel_msg_irecv(bm->m, bm->b.peer, bufs[idx], size, BENCH_TAG_DATA, 0,
					     &reqs[idx]);
			if (ret < 0)
				bench_die("urel_msg_irecv", ret);
		}
		bench_msg_ctl(bm, CTL_DONE, got);
		for (unsigned int i = 0; i < w; i++) {
			ret = urel_msg_cancel(reqs[i]);
			if (ret < 0)
				bench_die("urel_msg_cancel", ret);
			ret = urel_msg_wait(reqs[i], NULL);
			if (ret != -ECANCELED)
				bench_die("cancelled receive", ret);
			free(bufs[i]);
		}
		free(bufs);
	}
}

static int client(struct bench_msg *bm, const size_t *sizes, int nsizes, double secs,
		  uint64_t min_msgs, size_t wbytes)
{
	size_t max = 1;
	char *buf;

	for (int s = 0; s < nsizes; s++)
		max = sizes[s] > max ? sizes[s] : max;
	buf = malloc(max);
	if (!buf)
		return 1;
	memset(buf, 0x5a, max);
	for (int s = 0; s < nsizes; s++) {
		unsigned int w = window_of(sizes[s], wbytes), head = 0, out = 0;
		struct urel_msg_req *reqs[64];
		uint64_t sent = 0, t0, end, arg, kind;
		double us;
		int ret;

		bench_msg_ctl(bm, CTL_START, sizes[s]);
		if (ctl_recv(bm, &arg) != CTL_READY) {
			fprintf(stderr, "msg_stream: the receiver did not answer\n");
			return 1;
		}
		t0 = bench_now_ns();
		end = t0 + (uint64_t)(secs * 1e9);
		/* A ring of outstanding sends, completed oldest first. */
		while (sent < min_msgs || bench_now_ns() < end) {
			if (out == w) {
				ret = urel_msg_wait(reqs[head], NULL);
				if (ret < 0)
					bench_die("send", ret);
				head = (head + 1) % w;
				out--;
			}
			ret = urel_msg_isend(bm->m, bm->b.peer, buf, sizes[s], BENCH_TAG_DATA, 0,
					     &reqs[(head + out) % w]);
			if (ret < 0)
				bench_die("urel_msg_isend", ret);
			out++;
			sent++;
		}
		for (; out; out--, head = (head + 1) % w) {
			ret = urel_msg_wait(reqs[head], NULL);
			if (ret < 0)
				bench_die("send", ret);
		}
		bench_msg_ctl(bm, CTL_END, sent);
		kind = ctl_recv(bm, &arg);
		us = (double)(bench_now_ns() - t0) / 1000.0;
		if (kind != CTL_DONE || arg != sent) {
			fprintf(stderr, "msg_stream: %llu of %llu messages arrived\n",
				(unsigned long long)arg, (unsigned long long)sent);
			return 1;
		}
		printf("msg_stream size=%zu proto=%s sent=%llu MBps=%.2f Mmsgps=%.6f window=%u\n",
		       sizes[s], bench_msg_proto(bm, sizes[s]), (unsigned long long)sent,
		       (double)sent * (double)sizes[s] / us, (double)sent / us, w);
		fflush(stdout);
	}
	bench_msg_ctl(bm, CTL_QUIT, 0);
	free(buf);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: msg_stream (-s -r PEER_IP | -c SERVER_IP) -b BIND_IP [-p PORT] "
			"[-S SIZES] [-t SECONDS] [-N MIN_MSGS] [-W WINDOW_BYTES]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *peer_ip = NULL;
	const char *size_list = "8,4096,65536,1048576,67108864";
	unsigned int port = 18900;
	int is_server = 0, opt, nsizes, ret;
	size_t sizes[64], wbytes = 16 << 20;
	uint64_t min_msgs = 2;
	double secs = 1.0;
	struct bench_msg bm;

	while ((opt = getopt(argc, argv, "sc:r:b:p:S:t:N:W:")) != -1) {
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
		case 'N':
			min_msgs = strtoull(optarg, NULL, 0);
			break;
		case 'W':
			wbytes = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (!bind_ip || !peer_ip || secs <= 0 || port == 0 || wbytes < 1)
		usage();
	nsizes = bench_parse_sizes(size_list, sizes, 64);
	if (nsizes < 1)
		usage();
	bench_msg_open(&bm, bind_ip, peer_ip, port);
	ret = is_server ? server(&bm, wbytes) : client(&bm, sizes, nsizes, secs, min_msgs, wbytes);
	bench_msg_close(&bm);
	return ret;
}
