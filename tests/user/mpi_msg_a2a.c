// SPDX-License-Identifier: MIT
/*
 * In-VM test launched by mpirun (tests/user/mpirun_a2a.sh), any number of
 * ranks:
 *   mpi_msg_a2a a2a MAX     every rank sends every size from 0 B up to MAX
 *                           to every other (tiny, eager and rendezvous),
 *                           every byte, length and source checked;
 *   mpi_msg_a2a storm N     each rank sends N messages of mixed protocols
 *                           and tags to every other; receivers take them
 *                           all with ANY_SOURCE/ANY_TAG receives, half
 *                           posted before the traffic and half after (so
 *                           unexpected): every sender's messages must match
 *                           in the order it sent them, across the two
 *                           channels and the protocols, every byte checked;
 *   mpi_msg_a2a big SIZE    rank 0 sends SIZE bytes to rank 1, which sends
 *                           them back; both check every byte;
 *   mpi_msg_a2a pingpong N  ranks 0 and 1 exchange N round trips of each
 *                           size from 0 B to 1 MiB (tiny, eager, rendezvous;
 *                           every other send synchronous), every byte,
 *                           length, source and tag checked.
 * Every rank first prints its rank, the job size and its pid, so that a
 * launcher's script can compare them with what the launcher gave it.
 * Run under netem (loss, reordering) by the script, the storm shows that
 * the order comes from the library, not from a calm network.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <usnicrel_msg.h>

static int me, n;
static struct urel_msg *msg;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: %s\n", me, __FILE__, __LINE__, #cond);    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static uint8_t pat(uint32_t from, uint32_t to, uint64_t salt, size_t i)
{
	return (uint8_t)(from * 31 + to * 7 + salt * 101 + i * 13 + (i >> 9));
}

static void fill(uint8_t *p, size_t len, uint32_t from, uint32_t to, uint64_t salt)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(from, to, salt, i);
}

static size_t bad_byte(const uint8_t *p, size_t len, uint32_t from, uint32_t to, uint64_t salt)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != pat(from, to, salt, i))
			return i + 1;
	}
	return 0;
}

static const size_t a2a_sizes[] = {
	0,    1,     7,	    64,	    65,	    255,    256,	   257,
	4000, 16384, 16385, 100000, 262144, 262145, (1 << 20) + 3, (4 << 20) + 1
};

static void a2a(struct urel_group *g, size_t max)
{
	size_t ns = sizeof(a2a_sizes) / sizeof(a2a_sizes[0]);
	struct urel_msg_req **reqs = calloc(2 * (size_t)n, sizeof(*reqs));
	struct urel_msg_status *st = calloc(2 * (size_t)n, sizeof(*st));
	uint8_t **out = calloc((size_t)n, sizeof(*out)), **in = calloc((size_t)n, sizeof(*in));
	unsigned int count = 0;

	CHECK(reqs && st && out && in);
	for (size_t k = 0; k < ns && a2a_sizes[k] <= max; k++) {
		size_t len = a2a_sizes[k];
		unsigned int q = 0;

		for (int r = 0; r < n; r++) {
			if (r == me)
				continue;
			out[r] = malloc(len + 1);
			in[r] = malloc(len + 1);
			CHECK(out[r] && in[r]);
			fill(out[r], len, (uint32_t)me, (uint32_t)r, k);
			memset(in[r], 0xee, len + 1);
			/* A buffer one byte larger: the actual length is reported. */
			CHECK(urel_group_irecv(g, r, in[r], len + 1, (int)k, &reqs[q++]) == 0);
		}
		for (int i = 1; i < n; i++) {
			int r = (me + i) % n; /* everyone starts with a different peer */

			CHECK(urel_group_isend(g, r, out[r], len, (int)k, 0, &reqs[q++]) == 0);
		}
		CHECK(urel_msg_waitall(q, reqs, st) == 0);
		q = 0;
		for (int r = 0; r < n; r++) {
			int src, tag;

			if (r == me)
				continue;
			CHECK(st[q].len == len && st[q].received == len);
			CHECK(urel_group_source(g, &st[q], &src, &tag) == 0);
			CHECK(src == r && tag == (int)k);
			q++;
			if (bad_byte(in[r], len, (uint32_t)r, (uint32_t)me, k) ||
			    in[r][len] != 0xee) {
				fprintf(stderr, "rank %d: %zu bytes from %d: byte %zu wrong\n", me,
					len, r, bad_byte(in[r], len, (uint32_t)r, (uint32_t)me, k));
				exit(1);
			}
			free(out[r]);
			free(in[r]);
			count++;
		}
	}
	CHECK(urel_group_barrier(g) == 0);
	printf("rank %d: a2a: %u messages up to %zu bytes checked\n", me, count, max);
	free(reqs);
	free(st);
	free(out);
	free(in);
}

/* The storm's message number @seq from any sender: its size (the protocols in turn) and tag. */
#define STORM_MAX 40000
static size_t storm_len(unsigned int seq)
{
	static const size_t len[] = { 16, 200, 3000, 16384, 20000, 40000, 8, 0 };

	return len[seq % 8];
}

static int storm_tag(unsigned int seq)
{
	return (int)((seq * 7) % 5);
}

struct storm_msg {
	uint32_t from, seq;
};

static void storm(struct urel_group *g, unsigned int per_peer)
{
	unsigned int total = per_peer * (unsigned int)(n - 1), half = total / 2;
	struct urel_msg_req **rreq = calloc(total, sizeof(*rreq));
	struct urel_msg_req **sreq = calloc(total, sizeof(*sreq));
	struct urel_msg_status *st = calloc(total, sizeof(*st));
	uint8_t **in = calloc(total, sizeof(*in)), **out = calloc(total, sizeof(*out));
	unsigned int *next = calloc((size_t)n, sizeof(*next)), q = 0;

	CHECK(rreq && sreq && st && in && out && next);
	/* Half the receives before anyone sends. */
	for (unsigned int i = 0; i < total; i++) {
		in[i] = malloc(STORM_MAX);
		CHECK(in[i]);
	}
	for (unsigned int i = 0; i < half; i++)
		CHECK(urel_group_irecv(g, UREL_ANY_SOURCE, in[i], STORM_MAX, UREL_ANY_TAG,
				       &rreq[i]) == 0);
	CHECK(urel_group_barrier(g) == 0);
	/* Round-robin over the peers so every receiver sees interleaved senders. */
	for (unsigned int seq = 0; seq < per_peer; seq++) {
		for (int i = 1; i < n; i++) {
			int r = (me + i) % n;
			size_t len = storm_len(seq);
			struct storm_msg h = { (uint32_t)me, seq };

			out[q] = malloc(len + sizeof(h));
			CHECK(out[q]);
			fill(out[q], len, (uint32_t)me, (uint32_t)r, seq);
			if (len >= sizeof(h))
				memcpy(out[q], &h, sizeof(h));
			CHECK(urel_group_isend(g, r, out[q], len, storm_tag(seq), 0, &sreq[q]) ==
			      0);
			q++;
		}
	}
	/* Let much of it arrive unexpected, then post the rest. */
	for (int k = 0; k < 200; k++)
		urel_msg_progress(msg);
	for (unsigned int i = half; i < total; i++)
		CHECK(urel_group_irecv(g, UREL_ANY_SOURCE, in[i], STORM_MAX, UREL_ANY_TAG,
				       &rreq[i]) == 0);
	CHECK(urel_msg_waitall(total, rreq, st) == 0);
	CHECK(urel_msg_waitall(q, sreq, NULL) == 0);
	/* Receives were matched oldest first, so each sender's messages are in its order. */
	for (unsigned int i = 0; i < total; i++) {
		int src, tag;
		unsigned int seq;

		CHECK(urel_group_source(g, &st[i], &src, &tag) == 0);
		CHECK(src >= 0 && src < n && src != me);
		seq = next[src]++;
		if (st[i].len != storm_len(seq) || tag != storm_tag(seq)) {
			fprintf(stderr,
				"rank %d: receive %u from %d: %zu bytes tag %d, expected message "
				"%u "
				"(%zu bytes tag %d): out of order\n",
				me, i, src, st[i].len, tag, seq, storm_len(seq), storm_tag(seq));
			exit(1);
		}
		if (st[i].len >= sizeof(struct storm_msg)) {
			struct storm_msg h;

			memcpy(&h, in[i], sizeof(h));
			CHECK(h.from == (uint32_t)src && h.seq == seq);
			for (size_t b = sizeof(h); b < st[i].len; b++)
				CHECK(in[i][b] == pat((uint32_t)src, (uint32_t)me, seq, b));
		}
	}
	for (int r = 0; r < n; r++)
		CHECK(r == me || next[r] == per_peer);
	CHECK(urel_group_barrier(g) == 0);
	printf("rank %d: storm: %u wildcard receives, every sender in order\n", me, total);
	for (unsigned int i = 0; i < total; i++) {
		free(in[i]);
		free(out[i]);
	}
	free(rreq);
	free(sreq);
	free(st);
	free(in);
	free(out);
	free(next);
}

static void big(struct urel_group *g, size_t len)
{
	uint8_t *buf = malloc(len);
	struct urel_msg_req *r;
	struct urel_msg_status st;

	CHECK(buf);
	if (me == 0) {
		fill(buf, len, 0, 1, 99);
		CHECK(urel_group_isend(g, 1, buf, len, 9, 0, &r) == 0);
		CHECK(urel_msg_wait(r, NULL) == 0);
		memset(buf, 0, len);
		CHECK(urel_group_irecv(g, 1, buf, len, 10, &r) == 0);
		CHECK(urel_msg_wait(r, &st) == 0);
		CHECK(st.received == len);
		CHECK(!bad_byte(buf, len, 0, 1, 99));
		printf("rank 0: big: %zu bytes there and back, checked\n", len);
	} else if (me == 1) {
		CHECK(urel_group_irecv(g, 0, buf, len, 9, &r) == 0);
		CHECK(urel_msg_wait(r, &st) == 0);
		CHECK(st.received == len);
		CHECK(!bad_byte(buf, len, 0, 1, 99));
		CHECK(urel_group_isend(g, 0, buf, len, 10, 0, &r) == 0);
		CHECK(urel_msg_wait(r, NULL) == 0);
	}
	CHECK(urel_group_barrier(g) == 0);
	free(buf);
}

static void pp_send(struct urel_group *g, uint8_t *buf, size_t len, int peer, uint64_t salt,
		    int tag)
{
	struct urel_msg_req *r;

	fill(buf, len, (uint32_t)me, (uint32_t)peer, salt);
	CHECK(urel_group_isend(g, peer, buf, len, tag, tag & 1 ? UREL_MSG_SYNC : 0, &r) == 0);
	CHECK(urel_msg_wait(r, NULL) == 0);
}

static void pp_recv(struct urel_group *g, uint8_t *buf, size_t len, int peer, uint64_t salt,
		    int tag)
{
	struct urel_msg_status st;
	struct urel_msg_req *r;
	int src, got;

	memset(buf, 0xee, len + 1);
	CHECK(urel_group_irecv(g, peer, buf, len + 1, tag, &r) == 0);
	CHECK(urel_msg_wait(r, &st) == 0);
	CHECK(st.len == len && st.received == len);
	CHECK(urel_group_source(g, &st, &src, &got) == 0);
	CHECK(src == peer && got == tag);
	if (bad_byte(buf, len, (uint32_t)peer, (uint32_t)me, salt) || buf[len] != 0xee) {
		fprintf(stderr, "rank %d: pingpong %zu bytes from %d: byte %zu wrong\n", me, len,
			peer, bad_byte(buf, len, (uint32_t)peer, (uint32_t)me, salt));
		exit(1);
	}
}

/* Ranks 0 and 1 bounce each size; the reply carries the replier's own pattern. */
static void pingpong(struct urel_group *g, unsigned int rounds)
{
	static const size_t sizes[] = { 0, 8, 1000, 16385, 100000, (1 << 20) + 3 };
	size_t ns = sizeof(sizes) / sizeof(sizes[0]), max = sizes[ns - 1];
	uint8_t *out = malloc(max + 1), *in = malloc(max + 1);
	unsigned int count = 0;
	int peer = 1 - me;

	CHECK(out && in && rounds > 0);
	for (size_t k = 0; me < 2 && k < ns; k++) {
		for (unsigned int r = 0; r < rounds; r++) {
			uint64_t salt = k * 1000 + r;

			if (me == 0) {
				pp_send(g, out, sizes[k], peer, salt, (int)r);
				pp_recv(g, in, sizes[k], peer, salt, (int)r);
			} else {
				pp_recv(g, in, sizes[k], peer, salt, (int)r);
				pp_send(g, out, sizes[k], peer, salt, (int)r);
			}
			count++;
		}
	}
	CHECK(urel_group_barrier(g) == 0);
	printf("rank %d: pingpong: %u messages received and checked\n", me, count);
	free(out);
	free(in);
}

int main(int argc, char **argv)
{
	const char *ip = getenv("UREL_ADDR") ? getenv("UREL_ADDR") : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct urel_device *dev;
	struct urel_group *world;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_ep *ep;
	unsigned long arg;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: mpirun -np N mpi_msg_a2a a2a MAX | storm N | big SIZE | "
				"pingpong N\n");
		return 2;
	}
	arg = strtoul(argv[2], NULL, 0);
	CHECK(inet_pton(AF_INET, ip, &sin.sin_addr) == 1);
	CHECK(urel_device_open(NULL, &dev) == 0);
	CHECK(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep) == 0);
	CHECK(urel_msg_open(ep, NULL, &m) == 0);
	msg = m;
	CHECK(urel_job_init_pmix(m, &job) == 0);
	CHECK(urel_group_world(job, UREL_TAG_1, &world) == 0);
	me = urel_group_rank(world);
	n = urel_group_size(world);
	CHECK(n >= 2);
	printf("rank %d of %d: pid %d\n", me, n, (int)getpid());
	if (!strcmp(argv[1], "a2a"))
		a2a(world, arg);
	else if (!strcmp(argv[1], "storm"))
		storm(world, (unsigned int)arg);
	else if (!strcmp(argv[1], "big"))
		big(world, arg);
	else if (!strcmp(argv[1], "pingpong"))
		pingpong(world, (unsigned int)arg);
	else
		CHECK(!"unknown mode");
	if (me == 0)
		printf("mpi_msg_a2a %s %lu: %d ranks ok\n", argv[1], arg, n);
	urel_group_free(world);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return 0;
}
