// SPDX-License-Identifier: MIT
/*
 * In-VM test: emulated RDMA between two processes. The target registers
 * memory, hands its address and rkeys to the origin through a pipe, and then
 * sleeps in read() without ever polling: every put, get and atomic is done
 * by its kernel. The origin keeps a model of what the target's memory must
 * hold, checks every get and every atomic's old value against it, checks
 * that refused operations (bad rkey, out of bounds, missing rights,
 * misaligned operand) complete with their error and change nothing, and at
 * the end sends the model to the target, which compares it with its memory.
 * Several origin threads run fetch-and-adds on one counter: the old values
 * must be exactly 0..N-1, each once. Quiet puts (UREL_POST_QUIET) complete
 * only with the answer to a later put, in order, their bytes there; a
 * refused one with its error between them; 300 in a row (beyond the 255
 * one answer reports) all complete; and those outstanding when the peer
 * is removed fail.
 *
 * Usage: vm_rdma [IP] (default 127.0.0.1; the target and origin share it).
 */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "urt.h"
#include "urt_ep.h"
#include "urt_lib.h"

#define RW_SIZE (256 * 1024)
#define RO_SIZE 4096
#define ODD_SIZE 64
#define COUNTER_OFF (RW_SIZE - 8)
#define THREADS 4
#define ADDS_PER_THREAD 100

struct target_info {
	uint16_t port;
	uint32_t debug_id; /* the target endpoint's, for its counters */
	uint64_t rw_key, ro_key, odd_key, dead_key;
};

static struct urel_device *dev;
static struct urel_ep *ep;
static urel_peer_t target;
static uint8_t model[RW_SIZE];

static int full_read(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int full_write(int fd, const void *buf, size_t len)
{
	for (size_t put = 0; put < len;) {
		ssize_t n = write(fd, (const char *)buf + put, len - put);

		if (n <= 0)
			return -1;
		put += (size_t)n;
	}
	return 0;
}

/* Wait for the one completion of the op just posted; returns its status. */
static int wait_op(int opcode, uint32_t len)
{
	struct urel_completion c;

	if (urt_poll_n(dev, ep, &c, 1, 20000) != 1) {
		fprintf(stderr, "no completion within 20 s\n");
		exit(1);
	}
	URT_CHECK_EQ(c.opcode, opcode);
	URT_CHECK_EQ(c.peer, target);
	if (!c.status)
		URT_CHECK_EQ(c.len, len);
	return c.status;
}

static void put_get(const struct target_info *ti)
{
	static const uint32_t sizes[] = { 1, 7, 64, 65, 1000, 1500, 4096, 60000, RW_SIZE };
	static uint8_t buf[RW_SIZE], back[RW_SIZE];
	long long gso_runs;
	uint64_t off = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		off = len == RW_SIZE ? 0 : (off + 4093) % (RW_SIZE - len);
		urt_fill(buf, i + 1, len);
		URT_CHECK_EQ(urel_ep_put(ep, target, buf, len, ti->rw_key, off, NULL, 0), 0);
		URT_CHECK_EQ(wait_op(UREL_OP_PUT, len), 0);
		memcpy(model + off, buf, len);
		memset(back, 0, len);
		URT_CHECK_EQ(urel_ep_get(ep, target, back, len, ti->rw_key, off, NULL, 0), 0);
		URT_CHECK_EQ(wait_op(UREL_OP_GET, len), 0);
		URT_CHECK(!memcmp(back, model + off, len));
	}
	/*
	 * The whole region, as the target holds it now. Its kernel answers
	 * in runs of packets handed to UDP GSO in one call each, not one
	 * sendmsg per packet.
	 */
	gso_runs = urt_sysfs_counter(ti->debug_id, "tx_gso_runs");
	URT_CHECK(gso_runs >= 0);
	URT_CHECK_EQ(urel_ep_get(ep, target, back, RW_SIZE, ti->rw_key, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_GET, RW_SIZE), 0);
	URT_CHECK(!memcmp(back, model, RW_SIZE));
	URT_CHECK(urt_sysfs_counter(ti->debug_id, "tx_gso_runs") > gso_runs);
	/* Read-only memory reads. */
	URT_CHECK_EQ(urel_ep_get(ep, target, back, RO_SIZE, ti->ro_key, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_GET, RO_SIZE), 0);
	URT_CHECK_EQ(urt_verify(back, 99, RO_SIZE), 0);
}

/* One atomic; returns the old value, checks it against the model and updates it. */
static uint64_t atomic_op(const struct target_info *ti, enum urel_atomic_op op, unsigned int size,
			  uint64_t off, uint64_t operand, uint64_t compare)
{
	uint64_t old = 0xdeadbeefdeadbeefULL, want = 0, now;
	struct urel_atomic a = {
		.op = op, .size = size, .operand = operand, .compare = compare, .result = &old
	};

	memcpy(&want, model + off, size);
	URT_CHECK_EQ(urel_ep_atomic(ep, target, &a, ti->rw_key, off, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_ATOMIC, size), 0);
	if (size == 4)
		old &= 0xffffffffULL;
	URT_CHECK_EQ(old, want);
	now = op == UREL_ATOMIC_FETCH_ADD ? want + operand
	      : op == UREL_ATOMIC_SWAP	  ? operand
	      : want == compare		  ? operand
					  : want;
	memcpy(model + off, &now, size);
	return old;
}

/*
 * Each atomic gets exactly one answer, a single packet, counted by the
 * target as sent from its receive softirq or by its work item. With
 * VM_RDMA_COUNT_ANSWERS=1 (debugfs at hand, a clean path, no fault
 * injection) that is checked, and some must have left inline: only the
 * first on a channel may wait for its window to grow.
 */
static void atomics(const struct target_info *ti)
{
	const char *count = getenv("VM_RDMA_COUNT_ANSWERS");
	int check = count && !strcmp(count, "1");
	long long inl = urt_counter(ti->debug_id, "rdma_resp_inline");
	long long def = urt_counter(ti->debug_id, "rdma_resp_deferred");
	int n = 0;

	if (check)
		URT_CHECK(inl >= 0 && def >= 0);
	for (unsigned int size = 4; size <= 8; size += 4, n += 6) {
		uint64_t off = 1024 + size * 8, cur;

		atomic_op(ti, UREL_ATOMIC_FETCH_ADD, size, off, 5, 0);
		/* Wraps at the operand's width, not beyond. */
		atomic_op(ti, UREL_ATOMIC_FETCH_ADD, size, off, size == 4 ? 0xffffffffULL : ~0ULL,
			  0);
		cur = atomic_op(ti, UREL_ATOMIC_SWAP, size, off, 0x1234, 0);
		URT_CHECK(cur != 0x1234);
		atomic_op(ti, UREL_ATOMIC_CAS, size, off, 77, 0x1234); /* succeeds */
		atomic_op(ti, UREL_ATOMIC_CAS, size, off, 88, 0x1234); /* fails: holds 77 */
		URT_CHECK_EQ(atomic_op(ti, UREL_ATOMIC_FETCH_ADD, size, off, 0, 0), 77);
	}
	if (!check)
		return;
	inl = urt_counter(ti->debug_id, "rdma_resp_inline") - inl;
	def = urt_counter(ti->debug_id, "rdma_resp_deferred") - def;
	printf("atomics: %d answers, %lld inline, %lld deferred\n", n, inl, def);
	URT_CHECK_EQ(inl + def, n);
	URT_CHECK(inl > 0);
}

/* Refused operations complete with their error and leave the target alone. */
static void refusals(const struct target_info *ti)
{
	uint64_t v = 1;
	struct urel_atomic add = { .op = UREL_ATOMIC_FETCH_ADD, .size = 8, .operand = 1 };
	uint8_t buf[16] = { 0xee };

	URT_CHECK_EQ(urel_ep_put(ep, target, buf, 16, ti->dead_key, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 16), -ENOKEY);
	URT_CHECK_EQ(urel_ep_put(ep, target, buf, 16, ti->rw_key ^ 0x5a5a5a5a, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 16), -ENOKEY);
	URT_CHECK_EQ(urel_ep_put(ep, target, buf, 16, ti->rw_key, RW_SIZE - 8, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 16), -ERANGE);
	URT_CHECK_EQ(urel_ep_put(ep, target, buf, 16, ti->rw_key, UINT64_MAX - 64, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 16), -ERANGE);
	URT_CHECK_EQ(urel_ep_get(ep, target, buf, 16, ti->ro_key, RO_SIZE - 15, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_GET, 16), -ERANGE);
	URT_CHECK_EQ(urel_ep_put(ep, target, buf, 16, ti->ro_key, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 16), -EPERM);
	add.result = &v;
	URT_CHECK_EQ(urel_ep_atomic(ep, target, &add, ti->ro_key, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_ATOMIC, 8), -EPERM);
	URT_CHECK_EQ(v, 1);
	/* The registration starts one byte into a page: offset 0 is misaligned. */
	URT_CHECK_EQ(urel_ep_atomic(ep, target, &add, ti->odd_key, 0, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_ATOMIC, 8), -EINVAL);
	/* A refused multi-packet put: the first fragment is refused, the rest dropped. */
	URT_CHECK_EQ(urel_ep_put(ep, target, model, 60000, ti->rw_key, RW_SIZE - 30000, NULL, 0),
		     0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 60000), -ERANGE);
}

/* Take @n completions, in posting order: contexts 1..@n, the statuses in @want. */
static void quiet_expect(int n, const int *want, const char *what)
{
	static struct urel_completion c[512];

	URT_CHECK(n <= 512);
	if (urt_poll_n(dev, ep, c, n, 20000) != n) {
		fprintf(stderr, "%s: fewer than %d completions within 20 s\n", what, n);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		URT_CHECK_EQ(c[i].opcode, UREL_OP_PUT);
		URT_CHECK_EQ((uintptr_t)c[i].context, (uintptr_t)(i + 1));
		URT_CHECK_EQ(c[i].status, want ? want[i] : 0);
	}
}

/* Post a put of @len bytes of @buf at @off; the ring may be full for a while. */
static void quiet_post(const struct target_info *ti, uint64_t key, const void *buf, uint32_t len,
		       uint64_t off, uintptr_t ctx, unsigned int flags)
{
	int ret;

	while ((ret = urel_ep_put(ep, target, buf, len, key, off, (void *)ctx, flags)) == -EAGAIN)
		usleep(100);
	(void)ti;
	URT_CHECK_EQ(ret, 0);
}

static void quiet_puts(const struct target_info *ti, uint32_t my_debug_id)
{
	static const uint32_t sizes[] = { 8, 1, 64, 1500, 60000 };
	static uint8_t buf[5][60000], back[60000];
	const char *count = getenv("VM_RDMA_COUNT_ANSWERS");
	long long done = urt_counter(my_debug_id, "rdma_quiet_done");
	long long answers = urt_counter(ti->debug_id, "rdma_resp_inline") +
			    urt_counter(ti->debug_id, "rdma_resp_deferred");
	struct urel_completion c;
	int want[301] = { 0 };
	uint64_t off = 8192;

	/* Quiet puts alone are never answered: nothing completes. */
	for (int i = 0; i < 5; i++) {
		urt_fill(buf[i], 500 + i, sizes[i]);
		quiet_post(ti, ti->rw_key, buf[i], sizes[i], off, i + 1, UREL_POST_QUIET);
		memcpy(model + off, buf[i], sizes[i]);
		off += sizes[i] + 3;
	}
	URT_CHECK_EQ(urt_poll_n(dev, ep, &c, 1, 300), 0);
	/* An answered put after them: its answer completes them first, in order. */
	urt_fill(buf[0], 600, 8);
	quiet_post(ti, ti->rw_key, buf[0], 8, off, 6, 0);
	memcpy(model + off, buf[0], 8);
	quiet_expect(6, NULL, "quiet puts then a put");
	if (count && !strcmp(count, "1")) {
		/* Six puts, one answer; five reported by it. */
		URT_CHECK_EQ(urt_counter(ti->debug_id, "rdma_resp_inline") +
				     urt_counter(ti->debug_id, "rdma_resp_deferred") - answers,
			     1);
		URT_CHECK_EQ(urt_counter(my_debug_id, "rdma_quiet_done") - done, 5);
	}
	URT_CHECK_EQ(urel_ep_get(ep, target, back, 60000, ti->rw_key, 8192, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_GET, 60000), 0);
	URT_CHECK(!memcmp(back, model + 8192, 60000));

	/* A refused quiet put is answered with its error, between its neighbours. */
	urt_fill(buf[1], 700, 16);
	quiet_post(ti, ti->rw_key, buf[1], 16, 100000, 1, UREL_POST_QUIET);
	memcpy(model + 100000, buf[1], 16);
	quiet_post(ti, ti->rw_key, buf[1], 16, RW_SIZE - 8, 2, UREL_POST_QUIET);
	quiet_post(ti, ti->dead_key, buf[1], 16, 0, 3, UREL_POST_QUIET);
	quiet_post(ti, ti->rw_key, buf[1], 16, 100100, 4, UREL_POST_QUIET);
	memcpy(model + 100100, buf[1], 16);
	quiet_post(ti, ti->ro_key, buf[1], 16, 0, 5, UREL_POST_QUIET);
	quiet_post(ti, ti->rw_key, buf[1], 8, 100200, 6, 0);
	memcpy(model + 100200, buf[1], 8);
	want[1] = -ERANGE;
	want[2] = -ENOKEY;
	want[4] = -EPERM;
	quiet_expect(6, want, "refused quiet puts");
	memset(want, 0, sizeof(want));

	/* More in a row than one answer reports: the target answers one by itself. */
	for (int i = 0; i < 300; i++) {
		uint64_t v = 0x5100000000ULL + (uint64_t)i;

		quiet_post(ti, ti->rw_key, &v, 8, 120000 + 8 * (uint64_t)i, i + 1, UREL_POST_QUIET);
		memcpy(model + 120000 + 8 * i, &v, 8);
	}
	quiet_post(ti, ti->rw_key, model + 120000, 8, 120000, 301, 0);
	quiet_expect(301, want, "300 quiet puts");
	URT_CHECK_EQ(urel_ep_get(ep, target, back, 2400, ti->rw_key, 120000, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_GET, 2400), 0);
	URT_CHECK(!memcmp(back, model + 120000, 2400));
}

/*
 * Quiet puts outstanding when the origin forgets the peer fail: nothing
 * proves they were applied. They write what the target holds already.
 */
static void quiet_abort(const struct target_info *ti)
{
	struct urel_completion c[3];

	for (int i = 0; i < 3; i++)
		quiet_post(ti, ti->rw_key, model + 4096 * i, 64, 4096 * (uint64_t)i, i + 1,
			   UREL_POST_QUIET);
	URT_CHECK_EQ(urt_poll_n(dev, ep, c, 1, 300), 0);
	URT_CHECK_EQ(urel_av_remove(ep, target), 0);
	URT_CHECK_EQ(urt_poll_n(dev, ep, c, 3, 20000), 3);
	for (int i = 0; i < 3; i++) {
		URT_CHECK_EQ((uintptr_t)c[i].context, (uintptr_t)(i + 1));
		URT_CHECK(c[i].status < 0);
	}
}

static void *adder(void *arg)
{
	uint64_t *olds = arg;
	const struct target_info *ti = (const struct target_info *)olds[ADDS_PER_THREAD];

	for (int i = 0; i < ADDS_PER_THREAD; i++) {
		struct urel_atomic a = {
			.op = UREL_ATOMIC_FETCH_ADD, .size = 8, .operand = 1, .result = &olds[i]
		};

		/* The main thread takes the completions, which frees the queue. */
		while (urel_ep_atomic(ep, target, &a, ti->rw_key, COUNTER_OFF, &olds[i], 0) ==
		       -EAGAIN)
			usleep(100);
	}
	return NULL;
}

/* Concurrent fetch-and-adds on one counter: the old values are 0..N-1, each once. */
static void concurrent_adds(const struct target_info *ti)
{
	static uint64_t olds[THREADS][ADDS_PER_THREAD + 1];
	static uint8_t seen[THREADS * ADDS_PER_THREAD];
	struct urel_completion c[64];
	pthread_t th[THREADS];
	int done = 0, bad = 0;
	uint64_t zero = 0;

	URT_CHECK_EQ(urel_ep_put(ep, target, &zero, 8, ti->rw_key, COUNTER_OFF, NULL, 0), 0);
	URT_CHECK_EQ(wait_op(UREL_OP_PUT, 8), 0);
	for (int t = 0; t < THREADS; t++) {
		olds[t][ADDS_PER_THREAD] = (uintptr_t)ti;
		pthread_create(&th[t], NULL, adder, olds[t]);
	}
	while (done < THREADS * ADDS_PER_THREAD) {
		int n = urt_poll_n(dev, ep, c, 64, 20000);

		if (n <= 0) {
			fprintf(stderr, "fetch-and-add completions stopped at %d\n", done);
			exit(1);
		}
		for (int i = 0; i < n; i++)
			bad += c[i].status != 0 || c[i].opcode != UREL_OP_ATOMIC;
		done += n;
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	URT_CHECK_EQ(bad, 0);
	for (int t = 0; t < THREADS; t++) {
		for (int i = 0; i < ADDS_PER_THREAD; i++) {
			uint64_t old = olds[t][i];

			URT_CHECK(old < THREADS * ADDS_PER_THREAD);
			if (old < THREADS * ADDS_PER_THREAD)
				seen[old]++;
		}
	}
	for (int i = 0; i < THREADS * ADDS_PER_THREAD; i++)
		URT_CHECK_EQ(seen[i], 1);
	zero = THREADS * ADDS_PER_THREAD;
	memcpy(model + COUNTER_OFF, &zero, 8);
}

static int run_target(const char *ip, int to_origin, int from_origin)
{
	static uint8_t rw[RW_SIZE] __attribute__((aligned(4096)));
	static uint8_t ro[RO_SIZE] __attribute__((aligned(4096)));
	static uint8_t odd[ODD_SIZE + 8] __attribute__((aligned(4096)));
	static uint8_t want[RW_SIZE];
	struct urel_mr *mrw, *mro, *modd, *mdead;
	struct sockaddr_in me = urt_sin(ip, 0), peer;
	struct target_info ti = { 0 };
	struct urel_ep_info info;
	uint16_t origin_port;
	urel_peer_t p;

	urt_fill(ro, 99, RO_SIZE);
	if (urel_device_open(NULL, &dev) || urel_ep_create(dev, (void *)&me, sizeof(me), NULL, &ep))
		return 1;
	URT_CHECK_EQ(urel_mr_reg(ep, rw, RW_SIZE,
				 UREL_ACCESS_REMOTE_READ | UREL_ACCESS_REMOTE_WRITE |
					 UREL_ACCESS_REMOTE_ATOMIC,
				 &mrw),
		     0);
	URT_CHECK_EQ(urel_mr_reg(ep, ro, RO_SIZE, UREL_ACCESS_REMOTE_READ, &mro), 0);
	URT_CHECK_EQ(urel_mr_reg(ep, odd + 1, ODD_SIZE, UREL_ACCESS_REMOTE_ATOMIC, &modd), 0);
	URT_CHECK_EQ(urel_mr_reg(ep, rw, 64, UREL_ACCESS_REMOTE_WRITE, &mdead), 0);
	ti.port = urt_ep_port(ep);
	URT_CHECK_EQ(urel_ep_query(ep, &info), 0);
	ti.debug_id = info.debug_id;
	ti.rw_key = urel_mr_rkey(mrw);
	ti.ro_key = urel_mr_rkey(mro);
	ti.odd_key = urel_mr_rkey(modd);
	ti.dead_key = urel_mr_rkey(mdead);
	URT_CHECK_EQ(urel_mr_dereg(mdead), 0);
	if (full_read(from_origin, &origin_port, sizeof(origin_port)))
		return 1;
	peer = urt_sin(ip, origin_port);
	URT_CHECK_EQ(urel_av_insert(ep, (void *)&peer, sizeof(peer), &p), 0);
	if (full_write(to_origin, &ti, sizeof(ti)))
		return 1;
	/* Asleep until the origin is done: the kernel serves it alone. */
	if (full_read(from_origin, want, sizeof(want)))
		return 1;
	for (int i = 0; i < RW_SIZE; i++) {
		if (rw[i] != want[i]) {
			fprintf(stderr, "target memory differs from the model at %d: %#x != %#x\n",
				i, rw[i], want[i]);
			urt_failures++;
			break;
		}
	}
	URT_CHECK_EQ(urt_verify(ro, 99, RO_SIZE), 0);
	for (int i = 0; i < ODD_SIZE + 8; i++)
		URT_CHECK_EQ(odd[i], 0);
	URT_CHECK_EQ(urel_mr_dereg(mrw), 0);
	URT_CHECK_EQ(urel_mr_dereg(mro), 0);
	URT_CHECK_EQ(urel_mr_dereg(modd), 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	urel_device_close(dev);
	return urt_done("vm_rdma target");
}

static int run_origin(const char *ip, int to_target, int from_target)
{
	struct sockaddr_in me = urt_sin(ip, 0), peer;
	struct urel_ep_info info;
	struct target_info ti;
	uint16_t port;

	if (urel_device_open(NULL, &dev) || urel_ep_create(dev, (void *)&me, sizeof(me), NULL, &ep))
		return 1;
	URT_CHECK_EQ(urel_ep_query(ep, &info), 0);
	port = urt_ep_port(ep);
	if (full_write(to_target, &port, sizeof(port)) || full_read(from_target, &ti, sizeof(ti)))
		return 1;
	peer = urt_sin(ip, ti.port);
	URT_CHECK_EQ(urel_av_insert(ep, (void *)&peer, sizeof(peer), &target), 0);
	put_get(&ti);
	atomics(&ti);
	refusals(&ti);
	concurrent_adds(&ti);
	quiet_puts(&ti, info.debug_id);
	quiet_abort(&ti);
	if (full_write(to_target, model, sizeof(model)))
		return 1;
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	urel_device_close(dev);
	return urt_done("vm_rdma origin");
}

int main(int argc, char **argv)
{
	const char *ip = argc > 1 ? argv[1] : "127.0.0.1";
	int o2t[2], t2o[2], status = 0, rc;
	pid_t pid;

	if (pipe(o2t) || pipe(t2o))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		rc = run_target(ip, t2o[1], o2t[0]);
		fflush(NULL);
		_exit(rc);
	}
	rc = run_origin(ip, o2t[1], t2o[0]);
	close(o2t[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "target failed (status %#x)\n", status);
		rc = 1;
	}
	return rc;
}
