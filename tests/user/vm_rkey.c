// SPDX-License-Identifier: MIT
/*
 * In-VM test: remote memory is protected like verbs memory.
 *  - A registration serves the endpoint it was registered for: its key,
 *    named by a peer of another endpoint of the same file, is refused as an
 *    unknown key and counted there.
 *  - Guessed keys (random, and the real key's low half with other high
 *    bits) are all refused and counted; each request gets exactly one small
 *    answer; after USNIC_REL_BAD_RKEY_LIMIT (64) unknown keys in a row the
 *    guessing peer is locked out, the right key included.
 *  - DEREG_MR while a large GET is being answered: the target drops all it
 *    sends (fault injection), so with rkey_guard.sh's 32-packet send window
 *    its answer stalls after one window, unacknowledged, wherever the
 *    machine's timing falls. The target deregisters, overwrites its memory,
 *    then lets its packets go: the GET must complete with -ENOKEY, never
 *    with the new bytes.
 *  - DEREG_MR while PUTs and GETs to the registration are in flight, many
 *    times, the moment of DEREG_MR moving over their lifetime: each ends
 *    whole or with -ENOKEY, no GET returns a byte written after DEREG_MR, no
 *    PUT changes the memory after it, and a GET or PUT with the old key
 *    afterwards is refused with -ENOKEY.
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "urt.h"
#include "urt_ep.h"
#include "urt_lib.h"

#define LOCKOUT 64
#define GUESSES 200
#define BIG (1024 * 1024)
#define ROUNDS 3

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t debug_id(struct urel_ep *ep)
{
	struct urel_ep_info info;

	return urel_ep_query(ep, &info) ? 0 : info.debug_id;
}

static struct urel_ep *make_ep(struct urel_device *dev, uint32_t staging)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_ep_attr attr = { .staging_size = staging, .cq_entries = 1024 };
	struct urel_ep *ep = NULL;

	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), &attr, &ep), 0);
	return ep;
}

static urel_peer_t peer_of(struct urel_ep *ep, struct urel_ep *other)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", urt_ep_port(other));
	urel_peer_t p = 0;

	URT_CHECK_EQ(urel_av_insert(ep, (struct sockaddr *)&sin, sizeof(sin), &p), 0);
	return p;
}

/* @path to stderr, line by line: the IP stack's view for a failure's log. */
static void dump_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "%s: %s", path, line);
	fclose(f);
}

/* One GET of @len bytes; returns its completion status. */
static int get(struct urel_device *dev, struct urel_ep *ep, urel_peer_t p, void *buf, size_t len,
	       uint64_t rkey)
{
	struct urel_completion c;

	URT_CHECK_EQ(urel_ep_get(ep, p, buf, len, rkey, 0, NULL, 0), 0);
	if (urt_poll_n(dev, ep, &c, 1, 30000) != 1) {
		URT_CHECK(!"GET completed");
		/* Both ends' connection state, for the reader of the log. */
		urt_dump_debugfs("peers");
		urt_dump_debugfs("counters");
		/* What fault injection dropped: a test's own drop knob left on. */
		urt_dump_debugfs("fault");
		/* Packets lost below the module: UDP errors, per-socket drops. */
		dump_file("/proc/net/snmp");
		dump_file("/proc/net/udp");
		return 1;
	}
	return c.status;
}

static void test_keys(void)
{
	struct urel_device *dev = NULL;
	struct urel_ep *a, *b, *o;
	urel_peer_t oa, ob;
	static char mem[4096] __attribute__((aligned(4096)));
	char back[64];
	struct urel_mr *mr = NULL;
	uint64_t key;
	long long a_bad, a_tx, a_served;
	int refused = 0;

	URT_CHECK_EQ(urel_device_open(NULL, &dev), 0);
	if (!dev)
		return;
	a = make_ep(dev, 0);
	b = make_ep(dev, 0);
	o = make_ep(dev, 0);
	oa = peer_of(o, a);
	ob = peer_of(o, b);
	peer_of(a, o);
	peer_of(b, o);
	memset(mem, 0x42, sizeof(mem));
	URT_CHECK_EQ(urel_mr_reg(a, mem, sizeof(mem), UREL_ACCESS_REMOTE_READ, &mr), 0);
	key = urel_mr_rkey(mr);
	URT_CHECK(key != 0);

	/* The owner endpoint serves it... */
	URT_CHECK_EQ(get(dev, o, oa, back, sizeof(back), key), 0);
	URT_CHECK_EQ(back[0], 0x42);
	/* ...another endpoint of the same file does not, and says "no such key". */
	URT_CHECK_EQ(get(dev, o, ob, back, sizeof(back), key), -ENOKEY);
	URT_CHECK_EQ(urt_counter(debug_id(b), "rdma_bad_rkey"), 1);
	URT_CHECK_EQ(urt_counter(debug_id(b), "rdma_served"), 0);

	/* Guessing at A: half random keys, half the real low half with other high bits. */
	a_bad = urt_counter(debug_id(a), "rdma_bad_rkey");
	a_served = urt_counter(debug_id(a), "rdma_served");
	a_tx = urt_counter(debug_id(a), "tx_data_packets");
	for (int i = 0; i < GUESSES; i++) {
		uint64_t guess = i & 1 ? rnd64() : key ^ (rnd64() << 32 | 1ULL << 32);

		if (guess == key || !guess)
			continue;
		if (get(dev, o, oa, back, sizeof(back), guess) == -ENOKEY)
			refused++;
	}
	URT_CHECK_EQ(refused, GUESSES);
	/* Counted: the first LOCKOUT as unknown keys, the rest as locked out. */
	URT_CHECK_EQ(urt_counter(debug_id(a), "rdma_bad_rkey") - a_bad, LOCKOUT);
	URT_CHECK_EQ(urt_counter(debug_id(a), "rdma_locked_out"), GUESSES - LOCKOUT);
	URT_CHECK_EQ(urt_counter(debug_id(a), "rdma_served"), a_served);
	/* One small answer per request, no more. */
	URT_CHECK_EQ(urt_counter(debug_id(a), "tx_data_packets") - a_tx, GUESSES);
	/* Locked out: the right key is refused to this peer now. */
	URT_CHECK_EQ(get(dev, o, oa, back, sizeof(back), key), -ENOKEY);
	printf("vm_rkey: %d guesses refused, bad_rkey %lld, locked_out %lld\n", refused,
	       urt_counter(debug_id(a), "rdma_bad_rkey"),
	       urt_counter(debug_id(a), "rdma_locked_out"));

	URT_CHECK_EQ(urel_mr_dereg(mr), 0);
	urel_device_close(dev);
}

/* Drop (1) or send (0) everything @ep transmits, through its debugfs fault file. */
static void drop_all(struct urel_ep *ep, int on)
{
	URT_CHECK_EQ(urt_fault_set(debug_id(ep), "drop", on ? 1000000 : 0), 0);
}

static int full_io(int fd, void *buf, size_t len, int wr)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = wr ? write(fd, (char *)buf + done, len - done)
			       : read(fd, (char *)buf + done, len - done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

struct target_msg {
	uint16_t port;
	uint64_t key;
};

/* The target: registers, waits until a GET is being answered, deregisters, scribbles. */
/*
 * The target process's side: a device and an endpoint, the origin's port read
 * from @from_o and inserted as peer @p. 0, or 1 when the origin is gone.
 */
static int target_open(int from_o, struct urel_device **dev, struct urel_ep **t, urel_peer_t *p)
{
	struct sockaddr_in sin;
	uint16_t oport;

	if (urel_device_open(NULL, dev))
		return 1;
	*t = make_ep(*dev, 0);
	if (full_io(from_o, &oport, sizeof(oport), 0))
		return 1;
	sin = urt_sin("127.0.0.1", oport);
	URT_CHECK_EQ(urel_av_insert(*t, (struct sockaddr *)&sin, sizeof(sin), p), 0);
	return 0;
}

static int run_target(int to_o, int from_o)
{
	static uint8_t mem[BIG] __attribute__((aligned(4096)));
	struct urel_device *dev = NULL;
	struct target_msg m;
	struct urel_ep *t;
	urel_peer_t p;

	if (target_open(from_o, &dev, &t, &p))
		return 1;
	for (int r = 0; r < ROUNDS; r++) {
		struct urel_mr *mr = NULL;
		long long served = urt_counter(debug_id(t), "rdma_served");
		long long tx, end = urt_now_ms() + 60000;
		char go;

		memset(mem, 0xa5, sizeof(mem));
		URT_CHECK_EQ(urel_mr_reg(t, mem, sizeof(mem), UREL_ACCESS_REMOTE_READ, &mr), 0);
		m.port = urt_ep_port(t);
		m.key = urel_mr_rkey(mr);
		if (full_io(to_o, &m, sizeof(m), 1))
			return 1;
		/* The origin's small GET: the connection is up, verified both ways. */
		while (urt_counter(debug_id(t), "rdma_served") == served && urt_now_ms() < end)
			usleep(1000);
		URT_CHECK(served >= 0 && urt_counter(debug_id(t), "rdma_served") == served + 1);
		/*
		 * Served is counted when the request is taken; the answer leaves
		 * later, from the connection's work item. Dropping before the
		 * origin has it would lose it and every resend of it.
		 */
		if (full_io(from_o, &go, 1, 0))
			return 1;
		/* Nothing we send arrives: the big answer will stall after one window. */
		drop_all(t, 1);
		tx = urt_counter(debug_id(t), "tx_data_packets");
		go = 1;
		if (full_io(to_o, &go, 1, 1))
			return 1;
		/* The big GET was taken: its answer has started and cannot finish. */
		while (urt_counter(debug_id(t), "rdma_served") == served + 1 && urt_now_ms() < end)
			usleep(1000);
		URT_CHECK_EQ(urt_counter(debug_id(t), "rdma_served"), served + 2);
		URT_CHECK_EQ(urel_mr_dereg(mr), 0);
		/* Deregistered: the memory is ours again, no peer may see this. */
		memset(mem, 0x5a, sizeof(mem));
		tx = urt_counter(debug_id(t), "tx_data_packets") - tx;
		drop_all(t, 0);
		printf("vm_rkey target: round %d: DEREG_MR after %lld answer packets, %lld in "
		       "all\n",
		       r, tx, urt_counter(debug_id(t), "tx_data_packets"));
		fflush(stdout);
		if (full_io(from_o, &go, 1, 0))
			return 1;
	}
	urel_device_close(dev);
	return urt_done("vm_rkey target");
}

static void test_dereg_during_get(void)
{
	int to_t[2], from_t[2], status, cut = 0;
	struct urel_device *dev = NULL;
	struct urel_ep *o;
	urel_peer_t tp = 0;
	uint8_t *buf;
	pid_t pid;

	URT_CHECK_EQ(pipe(to_t), 0);
	URT_CHECK_EQ(pipe(from_t), 0);
	pid = fork();
	if (pid == 0) {
		close(to_t[1]);
		close(from_t[0]);
		exit(run_target(from_t[1], to_t[0]));
	}
	close(to_t[0]);
	close(from_t[1]);
	buf = malloc(BIG);
	URT_CHECK(buf != NULL);
	URT_CHECK_EQ(urel_device_open(NULL, &dev), 0);
	o = make_ep(dev, 2 * BIG);
	{
		uint16_t port = urt_ep_port(o);

		URT_CHECK_EQ(full_io(to_t[1], &port, sizeof(port), 1), 0);
	}
	for (int r = 0; r < ROUNDS && !urt_failures; r++) {
		struct target_msg m;
		int st;
		char go = 1;

		URT_CHECK_EQ(full_io(from_t[0], &m, sizeof(m), 0), 0);
		if (!tp) {
			struct sockaddr_in sin = urt_sin("127.0.0.1", m.port);

			URT_CHECK_EQ(urel_av_insert(o, (struct sockaddr *)&sin, sizeof(sin), &tp),
				     0);
		}
		/* A small GET first, then the big one once the target drops its packets. */
		URT_CHECK_EQ(get(dev, o, tp, buf, 16, m.key), 0);
		/* Answered: the target may drop what it sends from now on. */
		URT_CHECK_EQ(full_io(to_t[1], &go, 1, 1), 0);
		URT_CHECK_EQ(full_io(from_t[0], &go, 1, 0), 0);
		memset(buf, 0, BIG);
		st = get(dev, o, tp, buf, BIG, m.key);
		if (st == -ENOKEY) {
			cut++;
			/* Cut off: nothing of it lands in the caller's buffer. */
			for (size_t i = 0; i < BIG; i++) {
				if (buf[i]) {
					URT_CHECK_EQ(buf[i], 0);
					break;
				}
			}
		} else {
			URT_CHECK_EQ(st, 0);
			for (size_t i = 0; i < BIG; i++) {
				if (buf[i] != 0xa5) {
					fprintf(stderr,
						"byte %zu of the GET is %#x: read after DEREG_MR\n",
						i, buf[i]);
					urt_failures++;
					break;
				}
			}
		}
		URT_CHECK_EQ(full_io(to_t[1], &go, 1, 1), 0);
	}
	printf("vm_rkey: %d of %d GETs cut off by DEREG_MR, the others whole\n", cut, ROUNDS);
	/* The answer was stalled mid-way each time: each must be cut off. */
	URT_CHECK_EQ(cut, ROUNDS);
	close(to_t[1]);
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	urel_device_close(dev);
	free(buf);
}

#define FLOOD_ITERS 40
#define FLOOD_OPS 4
#define FLOOD_LEN (32 * 1024)
#define FLOOD_MEM (2 * FLOOD_OPS * FLOOD_LEN)

/*
 * The flood's target: registers, lets the origin start, deregisters at a
 * moment that moves from round to round, then owns the memory again.
 */
static int flood_target(int to_o, int from_o)
{
	static uint8_t mem[FLOOD_MEM] __attribute__((aligned(4096)));
	struct urel_device *dev = NULL;
	struct target_msg m;
	struct urel_ep *t;
	urel_peer_t p;

	if (target_open(from_o, &dev, &t, &p))
		return 1;
	for (int it = 0; it < FLOOD_ITERS && !urt_failures; it++) {
		struct urel_mr *mr = NULL;
		char go;

		/* GETs read the first half, PUTs write the second. */
		memset(mem, 0xa5, sizeof(mem));
		URT_CHECK_EQ(urel_mr_reg(t, mem, sizeof(mem),
					 UREL_ACCESS_REMOTE_READ | UREL_ACCESS_REMOTE_WRITE, &mr),
			     0);
		m.port = urt_ep_port(t);
		m.key = urel_mr_rkey(mr);
		if (full_io(to_o, &m, sizeof(m), 1) || full_io(from_o, &go, 1, 0))
			return 1;
		/* The origin's operations are flowing: DEREG_MR in their midst. */
		usleep((it % 8) * 300);
		URT_CHECK_EQ(urel_mr_dereg(mr), 0);
		/* Ours again: no peer may read or write this from now on. */
		memset(mem, 0x5a, sizeof(mem));
		if (full_io(to_o, &go, 1, 1) || full_io(from_o, &go, 1, 0))
			return 1;
		for (size_t j = 0; j < sizeof(mem); j++) {
			if (mem[j] != 0x5a) {
				fprintf(stderr,
					"round %d: byte %zu is %#x: written after DEREG_MR\n", it,
					j, mem[j]);
				urt_failures++;
				break;
			}
		}
	}
	urel_device_close(dev);
	return urt_done("vm_rkey flood target");
}

/* Post a batch of GETs and PUTs with @key and reap it; counts the outcomes. */
static void flood_batch(struct urel_device *dev, struct urel_ep *o, urel_peer_t p, uint64_t key,
			uint8_t gbuf[][FLOOD_LEN], const uint8_t *pbuf, int *whole, int *cut)
{
	struct urel_completion c[2 * FLOOD_OPS];
	int n = 2 * FLOOD_OPS;

	memset(gbuf, 0, (size_t)FLOOD_OPS * FLOOD_LEN);
	for (int i = 0; i < FLOOD_OPS; i++) {
		URT_CHECK_EQ(urel_ep_get(o, p, gbuf[i], FLOOD_LEN, key, (uint64_t)i * FLOOD_LEN,
					 (void *)(uintptr_t)i, 0),
			     0);
		URT_CHECK_EQ(urel_ep_put(o, p, pbuf, FLOOD_LEN, key,
					 (uint64_t)(FLOOD_OPS + i) * FLOOD_LEN,
					 (void *)(uintptr_t)i, 0),
			     0);
	}
	URT_CHECK_EQ(urt_poll_n(dev, o, c, n, 30000), n);
	for (int i = 0; i < n; i++) {
		uintptr_t k = (uintptr_t)c[i].context;
		int bad = 0;

		if (c[i].status == -ENOKEY) {
			++*cut;
		} else {
			URT_CHECK_EQ(c[i].status, 0);
			++*whole;
		}
		if (c[i].opcode != UREL_OP_GET)
			continue;
		/* Whole: the bytes before DEREG_MR; cut off: none at all. */
		for (size_t j = 0; j < FLOOD_LEN && !bad; j++)
			bad = gbuf[k][j] != (c[i].status ? 0 : 0xa5);
		if (bad) {
			fprintf(stderr, "GET %zu (status %d) holds bytes read after DEREG_MR\n",
				(size_t)k, c[i].status);
			urt_failures++;
		}
	}
}

static void test_dereg_flood(void)
{
	static uint8_t gbuf[FLOOD_OPS][FLOOD_LEN], pbuf[FLOOD_LEN];
	int to_t[2], from_t[2], status, whole = 0, cut = 0, late = 0;
	struct urel_device *dev = NULL;
	struct urel_ep *o;
	urel_peer_t tp = 0;
	uint8_t small[16];
	pid_t pid;

	URT_CHECK_EQ(pipe(to_t), 0);
	URT_CHECK_EQ(pipe(from_t), 0);
	pid = fork();
	if (pid == 0) {
		close(to_t[1]);
		close(from_t[0]);
		exit(flood_target(from_t[1], to_t[0]));
	}
	close(to_t[0]);
	close(from_t[1]);
	memset(pbuf, 0x11, sizeof(pbuf));
	URT_CHECK_EQ(urel_device_open(NULL, &dev), 0);
	o = make_ep(dev, 4 * FLOOD_MEM);
	{
		uint16_t port = urt_ep_port(o);

		URT_CHECK_EQ(full_io(to_t[1], &port, sizeof(port), 1), 0);
	}
	for (int it = 0; it < FLOOD_ITERS && !urt_failures; it++) {
		struct pollfd pfd = { .fd = from_t[0], .events = POLLIN };
		struct target_msg m;
		int before = late, cut0 = cut;
		char go = 1;

		if (full_io(from_t[0], &m, sizeof(m), 0)) {
			URT_CHECK(!"target alive");
			break;
		}
		if (!tp) {
			struct sockaddr_in sin = urt_sin("127.0.0.1", m.port);

			URT_CHECK_EQ(urel_av_insert(o, (struct sockaddr *)&sin, sizeof(sin), &tp),
				     0);
		}
		/* Served: also ends the run of refused keys that locks a peer out. */
		URT_CHECK_EQ(get(dev, o, tp, small, sizeof(small), m.key), 0);
		URT_CHECK_EQ(full_io(to_t[1], &go, 1, 1), 0);
		/*
		 * Batches until one is cut off or the target says DEREG_MR
		 * returned (stopping there keeps the peer under the lockout)...
		 */
		while (!urt_failures && cut == cut0 && poll(&pfd, 1, 0) == 0)
			flood_batch(dev, o, tp, m.key, gbuf, pbuf, &whole, &cut);
		URT_CHECK_EQ(full_io(from_t[0], &go, 1, 0), 0);
		/* ...then one more: every operation of it must be refused. */
		flood_batch(dev, o, tp, m.key, gbuf, pbuf, &whole, &late);
		URT_CHECK_EQ(late - before, 2 * FLOOD_OPS);
		URT_CHECK_EQ(full_io(to_t[1], &go, 1, 1), 0);
	}
	printf("vm_rkey: flood: %d operations whole, %d cut off by DEREG_MR, %d after it "
	       "refused\n",
	       whole, cut, late);
	/* DEREG_MR did land while operations were under way. */
	URT_CHECK(cut > 0);
	close(to_t[1]);
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	urel_device_close(dev);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2 || !strcmp(argv[1], "keys"))
		test_keys();
	if (argc < 2 || !strcmp(argv[1], "dereg"))
		test_dereg_during_get();
	if (argc < 2 || !strcmp(argv[1], "flood"))
		test_dereg_flood();
	return urt_done("vm_rkey");
}
