// SPDX-License-Identifier: MIT
/*
 * In-VM test: a peer costs what it uses.
 *
 * vm_peercost av: one endpoint puts 10 000 peers in its address vector
 * (100 real endpoints on 127.0.0.1, the rest addresses nobody answers),
 * measures the kernel memory the idle address vector costs per peer, then
 * runs bursts in both directions with the 100 real ones, measures the whole
 * at its peak, and checks that the windows give their memory back once the
 * traffic stops (debugfs ep<N>/memory). Kernel memory is what /proc/meminfo
 * says is neither free, nor page cache, nor process memory: slab, vmalloc
 * and the page allocator's large kmallocs alike. Bounds: 4 KiB per idle peer
 * on the stock kernel (16 KiB under lockdep, KASAN and kmemleak, which
 * enlarge every lock, timer and allocation), 64 MiB for the endpoint with its
 * 100 active peers.
 *
 * vm_peercost reorder: a burst from one endpoint to another while the
 * caller's netem reorders packets deeply: every message arrives once, in
 * order, the receive window had to grow (it has no slots until a packet
 * comes out of order), and the windows and packet copies are freed after.
 * With VM_PEERCOST_WINDOW_NOMEM=N, the first N growths of the receive window
 * fail (debugfs fault_window_nomem_next): exactly N packets are dropped
 * unacknowledged for it, all N failures are used up, the window grows after
 * them, and every message still arrives once and in order.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "urt.h"
#include "urt_ep.h"

#define NR_PEERS 10000
#define NR_ACTIVE 100
#define BIG_PORT 19999
#define BASE_PORT 20000
#define BURST 64
/*
 * Partners sending to the big endpoint at once: their bursts fit its 256
 * receive buffers, so none of them starves behind the others (an in-order
 * packet finding no buffer is dropped and resent after a backed-off RTO).
 */
#define GROUP 2
#define ROUNDS 2
#define DEADLINE_S 600
/*
 * The reorder case sends messages too long to pack (packing would put 64
 * in one packet and leave netem little to reorder), staged in slots.
 */
#define REORDER_LEN 300
#define STAGED_SLOT_BYTES 320
#define STAGING_BYTES 65536
#define STAGED_SLOTS (STAGING_BYTES / STAGED_SLOT_BYTES)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Kernel memory in use, KiB: neither free, nor page cache, nor anonymous. */
static long long kernel_kib(long long *slab, long long *vmalloc)
{
	long long total = 0, free_ = 0, buffers = 0, cached = 0, anon = 0, v;
	char key[64];
	FILE *f = fopen("/proc/meminfo", "r");

	*slab = *vmalloc = 0;
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld kB\n", key, &v) == 2) {
		if (!strcmp(key, "MemTotal:"))
			total = v;
		else if (!strcmp(key, "MemFree:"))
			free_ = v;
		else if (!strcmp(key, "Buffers:"))
			buffers = v;
		else if (!strcmp(key, "Cached:"))
			cached = v;
		else if (!strcmp(key, "AnonPages:"))
			anon = v;
		else if (!strcmp(key, "Slab:"))
			*slab = v;
		else if (!strcmp(key, "VmallocUsed:"))
			*vmalloc = v;
	}
	fclose(f);
	return total - free_ - buffers - cached - anon;
}

struct snap {
	long long kernel, slab, vmalloc;
};

/* The slab caches' memory, from /proc/slabinfo: what an idle peer is made of. */
#define MAX_CACHES 512

struct slabs {
	int n;
	struct {
		char name[64];
		long long bytes; /* whole slabs: objects, free ones and debug metadata */
		long long objsize; /* per object, redzones and metadata included */
	} c[MAX_CACHES];
};

static void slabs_read(struct slabs *sl)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];
	long page = sysconf(_SC_PAGESIZE);

	sl->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && sl->n < MAX_CACHES) {
		long long active, num, objsize, perslab, pages, aslabs, nslabs;
		char name[64];

		if (sscanf(line,
			   "%63s %lld %lld %lld %lld %lld : tunables %*d %*d %*d : slabdata %lld "
			   "%lld",
			   name, &active, &num, &objsize, &perslab, &pages, &aslabs, &nslabs) != 8)
			continue;
		snprintf(sl->c[sl->n].name, sizeof(sl->c[0].name), "%s", name);
		sl->c[sl->n].bytes = nslabs * pages * page;
		sl->c[sl->n].objsize = objsize;
		sl->n++;
	}
	fclose(f);
}

/* Print the caches that grew most from @a to @b, in bytes per peer of @peers. */
static void slabs_print_growth(const struct slabs *a, const struct slabs *b, long long peers)
{
	bool shown[MAX_CACHES] = { false };

	printf("slab growth per idle peer, largest first:");
	for (int k = 0; k < 6; k++) {
		long long best = 0;
		int at = -1;

		for (int i = 0; i < b->n; i++) {
			long long before = 0;

			for (int j = 0; j < a->n; j++)
				if (!strcmp(a->c[j].name, b->c[i].name))
					before = a->c[j].bytes;
			if (!shown[i] && b->c[i].bytes - before > best) {
				best = b->c[i].bytes - before;
				at = i;
			}
		}
		if (at < 0)
			break;
		shown[at] = true;
		printf(" %s %lld B (objects of %lld B)", b->c[at].name, best / peers,
		       b->c[at].objsize);
	}
	printf("\n");
}

static struct snap measure(void)
{
	struct snap s;

	usleep(200 * 1000);
	s.kernel = kernel_kib(&s.slab, &s.vmalloc);
	return s;
}

/* Field @name of debugfs ep<N>/memory; -1 if missing (an old module). */
static long long ep_memory(const struct urt_ep *ep, const char *name)
{
	return urt_debugfs_value(ep->info.debug_id, "memory", name);
}

/* A debugfs file holding one number; -1 if missing. */
static int ep_create(int fd, uint16_t port, uint32_t rx_bufs, struct urt_ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->fd = fd;
	ep->info.size = sizeof(ep->info);
	ep->info.sq_entries = 512;
	ep->info.cq_entries = 2048;
	ep->info.rx_bufs = rx_bufs;
	ep->info.staging_size = STAGING_BYTES;
	if (urt_addr(&ep->info.addr, AF_INET, "127.0.0.1", port))
		return -EINVAL;
	int ret = urt_ep_create_info(ep);

	if (ret)
		return ret;
	urt_post_all_rx(ep);
	return 0;
}

/*
 * One endpoint's side of the traffic: it sends @per_dst messages to each of
 * its @nr_dst destinations, BURST at a time to the same one, and expects as
 * many from each, in order (imm = sequence).
 */
struct side {
	struct urt_ep ep;
	uint32_t nr_dst;
	uint32_t *dst; /* peer handles */
	uint32_t *sent; /* per destination */
	uint32_t *recvd; /* per destination, by the handle's index */
	uint32_t cur; /* destination being sent to */
	uint32_t completed;
	uint32_t per_dst; /* messages to send to each */
	uint32_t expect; /* messages to receive from each */
	uint32_t len; /* of each message: inline up to 64 B, else staged */
	uint32_t total_recvd;
	const struct side *gate; /* send only in turn with the others to it */
	uint32_t gate_index;
	const struct side **rx_side; /* per destination: its side, if here */
	uint32_t *rx_index; /* per destination: our index there */
	int errors;
};

static int side_index(const struct side *s, uint32_t handle)
{
	for (uint32_t i = 0; i < s->nr_dst; i++)
		if (s->dst[i] == handle)
			return (int)i;
	return -1;
}

static void side_init(struct side *s, uint32_t nr_dst, uint32_t per_dst, uint32_t expect)
{
	s->nr_dst = nr_dst;
	s->per_dst = per_dst;
	s->expect = expect;
	s->len = 48;
	s->dst = calloc(nr_dst, sizeof(*s->dst));
	s->sent = calloc(nr_dst, sizeof(*s->sent));
	s->recvd = calloc(nr_dst, sizeof(*s->recvd));
	s->rx_side = calloc(nr_dst, sizeof(*s->rx_side));
	s->rx_index = calloc(nr_dst, sizeof(*s->rx_index));
	if (!s->dst || !s->sent || !s->recvd || !s->rx_side || !s->rx_index) {
		perror("calloc");
		exit(1);
	}
}

static bool side_done(const struct side *s)
{
	if (s->completed != s->nr_dst * s->per_dst)
		return false;
	for (uint32_t i = 0; i < s->nr_dst; i++)
		if (s->recvd[i] != s->expect)
			return false;
	return true;
}

/* May @s send its next message to destination @d now? */
static bool side_may_send(const struct side *s, uint32_t d)
{
	uint32_t round = s->sent[d] / BURST;
	const struct side *rx = s->rx_side[d];

	if (s->sent[d] >= s->per_dst)
		return false;
	/* A staging slot is written again only once its send completed. */
	if (s->len > USNIC_REL_SQE_INLINE_MAX && s->sent[d] - s->completed >= STAGED_SLOTS)
		return false;
	/* A burst waits until the receiver took the one before. */
	if (rx && rx->recvd[s->rx_index[d]] < round * BURST)
		return false;
	/* Burst r of partner i waits for the bursts before it in turn. */
	if (s->gate) {
		uint32_t before = round * NR_ACTIVE + s->gate_index / GROUP * GROUP;

		if (s->gate->total_recvd < before * BURST)
			return false;
	}
	return true;
}

/* Queue what the send ring takes and ring the doorbell; true if any went. */
static bool side_send(struct side *s)
{
	int r = USNIC_REL_REGION_SQ_DATA;
	uint32_t entries = s->ep.info.region[r].entries;
	uint32_t queued = 0;

	for (;;) {
		uint32_t head = __atomic_load_n(urt_ring_head(&s->ep, r), __ATOMIC_ACQUIRE);
		uint32_t tail = *urt_ring_tail(&s->ep, r);
		uint32_t d = s->nr_dst, k;

		if (tail - head >= entries)
			break;
		for (k = 0; k < s->nr_dst; k++) {
			if (side_may_send(s, (s->cur + k) % s->nr_dst)) {
				d = (s->cur + k) % s->nr_dst;
				break;
			}
		}
		if (d == s->nr_dst)
			break;
		struct usnic_rel_sqe sqe = {
			.opcode = USNIC_REL_OP_SEND,
			.peer = s->dst[d],
			.imm = s->sent[d],
			.user_ctx = d,
			.len = s->len,
		};
		uint8_t *payload = sqe.inline_data;

		if (s->len <= USNIC_REL_SQE_INLINE_MAX) {
			sqe.flags = USNIC_REL_SQE_INLINE;
		} else {
			sqe.staging_off = s->sent[d] % STAGED_SLOTS * STAGED_SLOT_BYTES;
			payload =
				(uint8_t *)s->ep.region[USNIC_REL_REGION_STAGING] + sqe.staging_off;
		}
		memset(payload, (int)(s->sent[d] & 0xff), sqe.len);
		urt_queue_sqe(&s->ep, USNIC_REL_CHAN_DATA, &sqe);
		queued++;
		s->sent[d]++;
		/* BURST in a row to one peer, then the next. */
		s->cur = s->sent[d] % BURST ? d : (d + 1) % s->nr_dst;
	}
	/* Ring only when the kernel has something left to take. */
	if (*urt_ring_tail(&s->ep, r) ==
	    __atomic_load_n(urt_ring_head(&s->ep, r), __ATOMIC_ACQUIRE))
		return queued;
	int ret = urt_doorbell(&s->ep, USNIC_REL_DB_SQ_DATA);

	if (ret < 0) {
		fprintf(stderr, "doorbell: %s\n", strerror(-ret));
		s->errors++;
	}
	return queued || ret > 0;
}

/* Reap completions; true if any. */
static bool side_reap(struct side *s)
{
	struct usnic_rel_cqe cqe;
	bool any = false, reposted = false;

	while (*urt_ring_head(&s->ep, USNIC_REL_REGION_CQ) !=
		       __atomic_load_n(urt_ring_tail(&s->ep, USNIC_REL_REGION_CQ),
				       __ATOMIC_ACQUIRE) &&
	       !urt_cq_next(&s->ep, &cqe, 0)) {
		any = true;
		if (cqe.opcode == USNIC_REL_OP_SEND) {
			if (cqe.status) {
				fprintf(stderr, "send to %u: %s\n", cqe.peer,
					strerror(-cqe.status));
				s->errors++;
			}
			s->completed++;
			continue;
		}
		int i = side_index(s, cqe.peer);
		const uint8_t *p = urt_rx_buf(&s->ep, cqe.buf);

		if (cqe.status || i < 0 || cqe.imm != s->recvd[i] || cqe.len != s->len ||
		    p[0] != (uint8_t)(cqe.imm & 0xff) ||
		    p[s->len - 1] != (uint8_t)(cqe.imm & 0xff)) {
			fprintf(stderr, "recv from %u: status %d imm %llu expected %u len %u\n",
				cqe.peer, cqe.status, (unsigned long long)cqe.imm,
				i < 0 ? 0 : s->recvd[i], cqe.len);
			s->errors++;
		}
		if (i >= 0)
			s->recvd[i]++;
		s->total_recvd++;
		if (!cqe.status) {
			urt_post_rx(&s->ep, cqe.buf);
			reposted = true;
		}
	}
	if (reposted)
		urt_doorbell(&s->ep, USNIC_REL_DB_RX);
	return any;
}

/*
 * Run the traffic of @n sides to the end; @peak tracks the kernel memory
 * seen meanwhile. Returns 0 or -1 on timeout.
 */
static int run_traffic(struct side *sides, int n, struct snap *peak)
{
	double deadline = now_s() + DEADLINE_S, last = 0, report = now_s() + 30;

	for (;;) {
		bool progress = false, done = true;

		for (int i = 0; i < n; i++) {
			progress |= side_send(&sides[i]);
			progress |= side_reap(&sides[i]);
			done &= side_done(&sides[i]);
		}
		if (peak && now_s() - last > 0.05) {
			struct snap s;

			s.kernel = kernel_kib(&s.slab, &s.vmalloc);
			if (s.kernel > peak->kernel)
				*peak = s;
			last = now_s();
		}
		if (done)
			return 0;
		if (now_s() > deadline)
			return -1;
		if (now_s() > report) {
			uint32_t sent = 0, recvd = 0;

			for (int i = 0; i < n; i++) {
				sent += sides[i].completed;
				recvd += sides[i].total_recvd;
			}
			printf("  ... %u sends completed, %u messages received\n", sent, recvd);
			report = now_s() + 30;
		}
		if (!progress)
			usleep(1000);
	}
}

/*
 * Wait up to 20 s for every window of @ep to have given its slots back and
 * every packet copy to be freed (all sends completed: none is left in a
 * window). Returns 0, or the window bytes or packet copies left.
 */
static long long wait_windows_freed(const struct urt_ep *ep)
{
	long long bytes = -1, bufs = -1;

	for (int i = 0; i < 200; i++) {
		bytes = ep_memory(ep, "window_bytes");
		bufs = ep_memory(ep, "tx_buffers");
		if (bytes == 0 && bufs == 0 && ep_memory(ep, "peers_with_window_slots") == 0)
			return 0;
		usleep(100 * 1000);
	}
	fprintf(stderr, "ep%u: window_bytes %lld, tx_buffers %lld left\n", ep->info.debug_id, bytes,
		bufs);
	return bytes ? bytes : bufs;
}

static bool debug_kernel(void)
{
	return access("/proc/lockdep", F_OK) == 0;
}

static int test_av(void)
{
	const long long idle_max = debug_kernel() ? 16384 : 4096;
	static struct side sides[NR_ACTIVE + 1];
	struct side *big = &sides[NR_ACTIVE];
	struct snap s0, s1, s2, s3, peak;
	int fd_partners, fd_big, ret;
	uint32_t active = 0;

	fd_partners = open("/dev/usnic_rel", O_RDWR);
	fd_big = open("/dev/usnic_rel", O_RDWR);
	if (fd_partners < 0 || fd_big < 0) {
		perror("open /dev/usnic_rel");
		return 1;
	}
	/* The 100 active peers, each with the big endpoint in its AV. */
	for (int i = 0; i < NR_ACTIVE; i++) {
		side_init(&sides[i], 1, BURST * ROUNDS, BURST * ROUNDS);
		ret = ep_create(fd_partners, BASE_PORT + i, BURST, &sides[i].ep);
		if (ret) {
			fprintf(stderr, "partner %d: create: %s\n", i, strerror(-ret));
			return 1;
		}
		ret = urt_av_insert(&sides[i].ep, AF_INET, "127.0.0.1", BIG_PORT);
		URT_CHECK(ret > 0);
		sides[i].dst[0] = (uint32_t)ret;
		sides[i].gate = big;
		sides[i].gate_index = (uint32_t)i;
		sides[i].rx_side[0] = big;
		sides[i].rx_index[0] = (uint32_t)i;
	}
	side_init(big, NR_ACTIVE, BURST * ROUNDS, BURST * ROUNDS);
	s0 = measure();
	ret = ep_create(fd_big, BIG_PORT, 256, &big->ep);
	if (ret) {
		fprintf(stderr, "big endpoint: create: %s\n", strerror(-ret));
		return 1;
	}
	s1 = measure();
	static struct slabs slabs1, slabs2;

	slabs_read(&slabs1);

	/* Every 100th peer is a real endpoint; the others never answer. */
	for (uint32_t k = 0; k < NR_PEERS; k++) {
		char ip[32];
		uint16_t port = 7000;

		if (k % (NR_PEERS / NR_ACTIVE) == 50) {
			snprintf(ip, sizeof(ip), "127.0.0.1");
			port = BASE_PORT + active;
		} else {
			snprintf(ip, sizeof(ip), "127.1.%u.%u", k / 250, k % 250 + 1);
		}
		ret = urt_av_insert(&big->ep, AF_INET, ip, port);
		if (ret <= 0) {
			fprintf(stderr, "AV_INSERT of peer %u: %s\n", k, strerror(-ret));
			return 1;
		}
		if (port != 7000) {
			big->rx_side[active] = &sides[active];
			big->dst[active++] = (uint32_t)ret;
		}
		/* The old module spent ~268 KiB a peer: stop before the VM runs out. */
		if (k == 499) {
			struct snap s = measure();
			long long per = (s.kernel - s1.kernel) * 1024 / 500;

			if (per > 64 * 1024) {
				fprintf(stderr,
					"FAIL: %lld B of kernel memory per idle peer after 500 "
					"peers\n",
					per);
				return 1;
			}
		}
	}
	s2 = measure();
	slabs_read(&slabs2);
	long long idle = (s2.kernel - s1.kernel) * 1024 / NR_PEERS;

	printf("idle address vector: %d peers, %lld KiB kernel memory (slab %+lld KiB, vmalloc "
	       "%+lld KiB): %lld B per idle peer (bound %lld B); struct usnic_rel_peer %lld B; "
	       "endpoint itself %lld KiB\n",
	       NR_PEERS, s2.kernel - s1.kernel, s2.slab - s1.slab, s2.vmalloc - s1.vmalloc, idle,
	       idle_max, ep_memory(&big->ep, "peer_struct_bytes"), s1.kernel - s0.kernel);
	slabs_print_growth(&slabs1, &slabs2, NR_PEERS);
	URT_CHECK(idle <= idle_max);
	URT_CHECK_EQ(ep_memory(&big->ep, "peers"), NR_PEERS);
	URT_CHECK_EQ(ep_memory(&big->ep, "window_bytes"), 0);
	URT_CHECK_EQ(ep_memory(&big->ep, "peers_with_window_slots"), 0);

	peak = s2;
	if (run_traffic(sides, NR_ACTIVE + 1, &peak)) {
		fprintf(stderr, "traffic did not finish in %d s\n", DEADLINE_S);
		urt_failures++;
	}
	for (int i = 0; i <= NR_ACTIVE; i++)
		URT_CHECK_EQ(sides[i].errors, 0);
	long long whole = peak.kernel - s0.kernel;

	printf("traffic: %d active peers x %d messages each way; peak kernel memory of the "
	       "endpoint with its 10000-peer AV and all windows: %lld KiB (bound 65536 KiB; slab "
	       "%+lld KiB, vmalloc %+lld KiB)\n",
	       NR_ACTIVE, BURST * ROUNDS, whole, peak.slab - s0.slab, peak.vmalloc - s0.vmalloc);
	URT_CHECK(whole <= 64 * 1024);
	long long txg = urt_counter(big->ep.info.debug_id, "tx_window_grow");
	long long rxg = urt_counter(big->ep.info.debug_id, "rx_window_grow");

	printf("big endpoint: tx_window_grow %lld rx_window_grow %lld, largest windows: tx %lld rx "
	       "%lld slots\n",
	       txg, rxg, ep_memory(&big->ep, "tx_slots_max"), ep_memory(&big->ep, "rx_slots_max"));
	/*
	 * Bursts of 64 to one peer: every active peer's window got slots.
	 * How many depends on how soon ACKs come back: a sender asks for one
	 * half-way through its congestion window and when it fills, so over
	 * loopback a burst may never need more than the first 16 slots
	 * (KUnit's txwin cases resize windows with packets in flight).
	 */
	URT_CHECK(txg >= NR_ACTIVE);
	URT_CHECK(ep_memory(&big->ep, "tx_slots_max") >= 16);

	/* Traffic over: the windows give their slots back. */
	long long left = wait_windows_freed(&big->ep);

	URT_CHECK_EQ(left, 0);
	s3 = measure();
	printf("after the traffic: window_bytes %lld, window_shrink %lld; kernel memory per peer "
	       "%lld B\n",
	       ep_memory(&big->ep, "window_bytes"), ep_memory(&big->ep, "window_shrinks"),
	       (s3.kernel - s1.kernel) * 1024 / NR_PEERS);
	URT_CHECK(ep_memory(&big->ep, "window_shrinks") >= NR_ACTIVE);
	for (int i = 0; i < NR_ACTIVE; i++)
		URT_CHECK_EQ(wait_windows_freed(&sides[i].ep), 0);
	URT_CHECK((s3.kernel - s1.kernel) * 1024 / NR_PEERS <= idle_max);

	for (int i = 0; i <= NR_ACTIVE; i++)
		URT_CHECK_EQ(urt_ep_destroy(&sides[i].ep), 0);
	close(fd_partners);
	close(fd_big);
	return urt_done("vm_peercost av");
}

static int test_reorder(uint32_t count)
{
	static struct side sides[2];
	int fd = open("/dev/usnic_rel", O_RDWR), ret;

	if (fd < 0) {
		perror("open /dev/usnic_rel");
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		/* 0 sends, 1 receives. */
		side_init(&sides[i], 1, i == 0 ? count : 0, i == 0 ? 0 : count);
		sides[i].len = REORDER_LEN;
		ret = ep_create(fd, BASE_PORT + i, 1024, &sides[i].ep);
		if (ret) {
			fprintf(stderr, "create: %s\n", strerror(-ret));
			return 1;
		}
		ret = urt_av_insert(&sides[i].ep, AF_INET, "127.0.0.1", BASE_PORT + 1 - i);
		URT_CHECK(ret > 0);
		sides[i].dst[0] = (uint32_t)ret;
	}
	/*
	 * The first N growths of the receive window fail as if out of memory:
	 * those packets are dropped unacknowledged and must come again.
	 */
	const char *nomem_env = getenv("VM_PEERCOST_WINDOW_NOMEM");
	long long nomem = nomem_env ? atoll(nomem_env) : 0;
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/fault_window_nomem_next",
		 sides[1].ep.info.debug_id);
	if (nomem) {
		FILE *f = fopen(path, "w");

		URT_CHECK(f && fprintf(f, "%lld\n", nomem) > 0 && fclose(f) == 0);
	}
	if (run_traffic(sides, 2, NULL)) {
		fprintf(stderr, "traffic did not finish in %d s\n", DEADLINE_S);
		urt_failures++;
	}
	URT_CHECK_EQ(sides[0].errors, 0);
	URT_CHECK_EQ(sides[1].errors, 0);
	URT_CHECK_EQ(sides[1].recvd[0], count);
	long long ooo = urt_counter(sides[1].ep.info.debug_id, "rx_out_of_order");
	long long rx_max = ep_memory(&sides[1].ep, "rx_slots_max");
	long long grew = urt_counter(sides[1].ep.info.debug_id, "rx_window_grow");
	long long failed = urt_counter(sides[1].ep.info.debug_id, "window_no_memory");

	printf("reorder: %u messages, %lld out of order, receive window grew %lld times to %lld "
	       "slots, %lld drops for want of window memory (%lld injected)\n",
	       count, ooo, grew, rx_max, failed, nomem);
	/*
	 * A packet held out of order needs slots the window does not have
	 * before: it grew (after every failure injected) to at least its first
	 * size, and each injected failure, no other, dropped a packet.
	 */
	URT_CHECK(ooo > 0);
	URT_CHECK(grew >= 1);
	URT_CHECK(rx_max >= 16);
	URT_CHECK_EQ(failed, nomem);
	URT_CHECK_EQ(urt_fault_count(&sides[1].ep, "window_nomem"), nomem);
	URT_CHECK_EQ(urt_file_number(path), 0);
	URT_CHECK_EQ(wait_windows_freed(&sides[0].ep), 0);
	URT_CHECK_EQ(wait_windows_freed(&sides[1].ep), 0);
	for (int i = 0; i < 2; i++)
		URT_CHECK_EQ(urt_ep_destroy(&sides[i].ep), 0);
	close(fd);
	return urt_done("vm_peercost reorder");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "reorder"))
		return test_reorder(argc >= 3 ? (uint32_t)atoi(argv[2]) : 3000);
	if (argc < 2 || !strcmp(argv[1], "av"))
		return test_av();
	fprintf(stderr, "usage: vm_peercost [av | reorder [COUNT]]\n");
	return 2;
}
