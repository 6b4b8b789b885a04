// SPDX-License-Identifier: MIT
/*
 * In-VM test: no send reports success unless its bytes were delivered, no
 * half-sent message wedges a channel, and one slow peer does not stall the
 * others. Run by delivery.sh with send_window=16, so that a receiver that
 * returns no buffers fills a sender's window within a few packets.
 *
 *   reset     A multi-fragment message parked part-way on a full window when
 *             the receiver restarts. Before, the receiver short of buffers
 *             said so (rnr_acks_sent) and the sender took it as flow control
 *             (peer_rnr in debugfs). Then every send outstanding (the parked
 *             one included) fails with -ECONNRESET, and the new receiver gets
 *             only the message sent afterwards, never one made of fragments
 *             of two sequence spaces.
 *   remove    The same when the sender removes the peer and inserts it again
 *             (same handle) after the receiver restarted: -ECANCELED.
 *   nomem     Every Nth allocation of the sender's send path, and of the
 *             target's answers, fails (debugfs fault_nomem_every: packets,
 *             parked sends and send window growth alike), and the first
 *             growths of both send windows fail (fault_tx_window_nomem_next),
 *             while multi-fragment messages and PUTs go out: every send
 *             completes successfully (retried), every message arrives intact
 *             and in order, every PUT lands, with so few receive buffers and
 *             CQ slots that one leak would stall the run. With every 2nd
 *             allocation failing, a retry that needs a packet and window
 *             slots at once never succeeds: a sender keeps what it got.
 *   slow      One sender, a peer S that never returns receive buffers and a
 *             peer F that does: F gets all its messages while S is alive, and
 *             the sends to S complete with -ECANCELED when S is removed.
 *             Prints F's time alone and beside S (same run; no threshold).
 *   doorbell  A receiver with two buffers that rings USNIC_REL_DB_RX only
 *             when it sees NEED_DOORBELL after returning a buffer, against a
 *             sender that reorders: every message arrives, nothing hangs.
 *   cqfull    A receiver with a 16-entry CQ left full until NEED_DOORBELL is
 *             set, with packets in the backlog behind it (debugfs), then
 *             drained with DB_RX only on the flag: every message arrives
 *             exactly once, in order.
 *   trickle   A receiver with 4 buffers that returns each one after a pause,
 *             against a sender of short messages rung 64 at a time (packed):
 *             every message arrives once, in order, every send completes
 *             successfully, and with no loss nothing is sent twice (a packet
 *             that finds no buffer is held, not dropped for a resend).
 *
 * Usage: vm_delivery [CASE...] (default: all).
 */
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

#define DEADLINE_MS 60000

/* One open file per endpoint: poll() on one reports only its own CQ. */
static int dev_fds[8];
static unsigned int nr_fds;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Like urt_ep_create, with ring sizes (0 = default). */
static int ep_open(struct urt_ep *ep, uint16_t port, uint32_t cq, uint32_t rx_bufs)
{
	int ret;

	int dev_fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);

	URT_CHECK(dev_fd >= 0);
	if (dev_fd < 0)
		return -errno;
	if (nr_fds < sizeof(dev_fds) / sizeof(dev_fds[0]))
		dev_fds[nr_fds++] = dev_fd;
	memset(ep, 0, sizeof(*ep));
	ep->fd = dev_fd;
	ep->info.size = sizeof(ep->info);
	ep->info.cq_entries = cq;
	ep->info.rx_bufs = rx_bufs;
	urt_addr(&ep->info.addr, AF_INET, "127.0.0.1", port);
	ret = urt_ioctl(dev_fd, USNIC_REL_IOC_CREATE_EP, &ep->info);
	URT_CHECK_EQ(ret, 0);
	if (ret)
		return ret;
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		void *p = mmap(NULL, ep->info.region[i].size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       dev_fd, (off_t)ep->info.region[i].offset);

		URT_CHECK(p != MAP_FAILED);
		if (p == MAP_FAILED)
			return -ENOMEM;
		ep->region[i] = p;
	}
	return 0;
}

static int av_insert(struct urt_ep *ep, struct urt_ep *to)
{
	int peer = urt_av_insert(ep, AF_INET, "127.0.0.1", to->info.addr.port);

	URT_CHECK(peer > 0);
	return peer;
}

static uint8_t *staging(struct urt_ep *ep)
{
	return ep->region[USNIC_REL_REGION_STAGING];
}

/* Queue a message of @len bytes from staging offset @off (pattern @id). */
static void queue_msg(struct urt_ep *ep, int chan, uint32_t peer, uint32_t id, uint32_t off,
		      uint32_t len)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.peer = peer,
		.imm = id,
		.user_ctx = id,
		.len = len,
		.staging_off = off,
	};

	for (uint32_t i = 0; i < len; i++)
		staging(ep)[off + i] = urt_pattern(id, len, i);
	urt_queue_sqe(ep, chan, &sqe);
}

static void queue_inline(struct urt_ep *ep, int chan, uint32_t peer, uint32_t id)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.flags = USNIC_REL_SQE_INLINE,
		.peer = peer,
		.imm = id,
		.user_ctx = id,
		.len = 4,
	};

	memcpy(sqe.inline_data, &id, 4);
	urt_queue_sqe(ep, chan, &sqe);
}

/* Ring until the kernel took everything queued on @chan. */
static void ring(struct urt_ep *ep, int chan)
{
	int r = chan == USNIC_REL_CHAN_CMD ? USNIC_REL_REGION_SQ_CMD : USNIC_REL_REGION_SQ_DATA;
	long long end = now_ms() + DEADLINE_MS;

	while (*urt_ring_head(ep, r) != *urt_ring_tail(ep, r) && now_ms() < end) {
		int ret = urt_doorbell(ep, 1U << chan);

		URT_CHECK(ret >= 0);
		if (ret < 0)
			return;
		if (!ret)
			usleep(200);
	}
	URT_CHECK_EQ(*urt_ring_head(ep, r), *urt_ring_tail(ep, r));
}

static bool msg_ok(struct urt_ep *ep, const struct usnic_rel_cqe *cqe)
{
	const uint8_t *p = urt_rx_buf(ep, cqe->buf);

	for (uint32_t i = 0; i < cqe->len; i++)
		if (p[i] != urt_pattern((uint32_t)cqe->imm, cqe->len, i))
			return false;
	return true;
}

static void *ep_region_hdr(struct urt_ep *ep, int region)
{
	return ep->region[region];
}

static void dump_counters(const char *who, struct urt_ep *ep)
{
	static const char *const names[] = { "rx_no_buf",
					     "rx_out_of_order",
					     "rx_hold_full",
					     "retx_timeout",
					     "retx_fast",
					     "peers_dead",
					     "tx_data_packets",
					     "rx_packets",
					     "rx_messages",
					     "rx_bad_header",
					     "rx_duplicate",
					     "rx_out_of_window",
					     "rx_stale_incarnation",
					     "rx_msg_aborted",
					     "peer_resets",
					     "tx_parked" };

	printf("  %s:", who);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf(" %s %lld", names[i], urt_counter(ep->info.debug_id, names[i]));
	printf("\n");
}

/*
 * The receiver speaks first, so that every packet the sender sends carries
 * the receiver's incarnation and its next life can tell them apart.
 */
static void greet(struct urt_ep *from, struct urt_ep *to, uint32_t to_peer)
{
	struct usnic_rel_cqe cqe;

	urt_post_all_rx(to);
	queue_inline(from, USNIC_REL_CHAN_DATA, to_peer, 77);
	ring(from, USNIC_REL_CHAN_DATA);
	URT_CHECK_EQ(urt_cq_next(to, &cqe, 20000), 0);
	URT_CHECK_EQ(urt_cq_next(from, &cqe, 20000), 0);
	URT_CHECK_EQ(cqe.status, 0);
}

/*
 * Fill the window to a receiver that returns no buffers: messages of six
 * fragments until one is parked part-way. Returns how many were queued.
 */
static int fill_window(struct urt_ep *tx, uint32_t peer)
{
	uint32_t mtu = tx->info.mtu[USNIC_REL_CHAN_DATA];
	uint32_t len = 5 * mtu + 100, n = 0;

	/* 16 packets of window: messages 1 and 2 go out, 3 stops after 4 of 6. */
	for (n = 1; n <= 3; n++)
		queue_msg(tx, USNIC_REL_CHAN_DATA, peer, n, (n - 1) * len, len);
	ring(tx, USNIC_REL_CHAN_DATA);
	return (int)(n - 1);
}

/* Wait for @n CQEs on @tx, each with @status; returns how many came. */
static int expect_failures(struct urt_ep *tx, int n, int status)
{
	struct usnic_rel_cqe cqe;
	int got = 0;

	while (got < n && urt_cq_next(tx, &cqe, 20000) == 0) {
		printf("  send %llu: status %d\n", (unsigned long long)cqe.user_ctx, cqe.status);
		URT_CHECK_EQ(cqe.status, status);
		got++;
	}
	URT_CHECK_EQ(got, n);
	return got;
}

/* Message 9 reaches the new receiver, alone and intact. */
static void expect_only_new(struct urt_ep *tx, struct urt_ep *rx, uint32_t peer)
{
	uint32_t len = 3 * tx->info.mtu[USNIC_REL_CHAN_DATA] + 7;
	struct usnic_rel_cqe cqe;

	queue_msg(tx, USNIC_REL_CHAN_DATA, peer, 9, 0, len);
	ring(tx, USNIC_REL_CHAN_DATA);
	if (!urt_cq_next(tx, &cqe, 20000)) {
		URT_CHECK_EQ(cqe.user_ctx, 9);
		URT_CHECK_EQ(cqe.status, 0);
	} else {
		URT_CHECK(!"message 9 completed");
	}
	if (!urt_cq_next(rx, &cqe, 20000)) {
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.imm, 9);
		URT_CHECK_EQ(cqe.len, len);
		URT_CHECK(msg_ok(rx, &cqe));
	} else {
		URT_CHECK(!"message 9 arrived");
		dump_counters("tx", tx);
		dump_counters("rx", rx);
	}
	/* Nothing else: no message made of the parked one's tail. */
	URT_CHECK_EQ(urt_cq_next(rx, &cqe, 500), -ETIMEDOUT);
	URT_CHECK_EQ(urt_cq_next(tx, &cqe, 100), -ETIMEDOUT);
}

/*
 * Field @key (" name ") of @ep's peer @handle in debugfs, on channel @chan,
 * or summed over the channels when @chan is -1; -1 if missing.
 */
static long peer_value(struct urt_ep *ep, int handle, int chan, const char *key)
{
	char path[96], line[512];
	long sum = -1;
	int in_peer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/peers", ep->info.debug_id);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int h, v;
		const char *p;
		int c;

		if (sscanf(line, "peer %u", &h) == 1) {
			in_peer = (int)h == handle;
			continue;
		}
		p = strstr(line, key);
		if (!in_peer || !p || sscanf(line, " chan %d", &c) != 1 || (chan >= 0 && c != chan))
			continue;
		if (sscanf(p + strlen(key), "%u", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v;
	}
	fclose(f);
	return sum;
}

/* Packets of @ep's peer @handle waiting in a backlog, summed over channels. */
static long backlog_of(struct urt_ep *ep, int handle)
{
	return peer_value(ep, handle, -1, " backlog ");
}

static void check_reset(void)
{
	struct urt_ep tx, rx;
	uint16_t port;
	int peer, n;

	printf("reset: a message parked part-way when the receiver restarts\n");
	if (ep_open(&tx, 0, 0, 0) || ep_open(&rx, 0, 0, 0))
		return;
	port = rx.info.addr.port;
	peer = av_insert(&tx, &rx);
	greet(&rx, &tx, (uint32_t)av_insert(&rx, &tx));
	/*
	 * rx returns no buffer: nothing is acknowledged, and the sender stops
	 * once rx said it holds the first packet (a zero window).
	 */
	n = fill_window(&tx, peer);
	usleep(100 * 1000);
	URT_CHECK(urt_counter(tx.info.debug_id, "tx_data_packets") >= 1);
	URT_CHECK(urt_counter(tx.info.debug_id, "tx_parked") >= 1);
	/* rx said so: flow control, not congestion (cwnd not collapsed). */
	printf("  rnr_acks_sent %lld received %lld, rx_no_buf %lld, cwnd %ld\n",
	       urt_counter(rx.info.debug_id, "rnr_acks_sent"),
	       urt_counter(tx.info.debug_id, "rnr_acks_received"),
	       urt_counter(rx.info.debug_id, "rx_no_buf"),
	       peer_value(&tx, peer, USNIC_REL_CHAN_DATA, " cwnd "));
	URT_CHECK(urt_counter(rx.info.debug_id, "rnr_acks_sent") > 0);
	URT_CHECK(urt_counter(tx.info.debug_id, "rnr_acks_received") > 0);
	URT_CHECK_EQ(peer_value(&tx, peer, USNIC_REL_CHAN_DATA, " peer_rnr "), 1);

	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	if (ep_open(&rx, port, 0, 0))
		return;
	av_insert(&rx, &tx);
	urt_post_all_rx(&rx);
	/* The retransmissions meet the new life, which makes the sender reset. */
	expect_failures(&tx, n, -ECONNRESET);
	expect_only_new(&tx, &rx, peer);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

static void check_remove(void)
{
	struct urt_ep tx, rx;
	uint16_t port;
	int peer, n;

	printf("remove: a message parked part-way when its peer is removed\n");
	if (ep_open(&tx, 0, 0, 0) || ep_open(&rx, 0, 0, 0))
		return;
	port = rx.info.addr.port;
	peer = av_insert(&tx, &rx);
	greet(&rx, &tx, (uint32_t)av_insert(&rx, &tx));
	n = fill_window(&tx, peer);
	usleep(100 * 1000);
	URT_CHECK_EQ(urt_av_remove(&tx, peer), 0);
	expect_failures(&tx, n, -ECANCELED);

	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	if (ep_open(&rx, port, 0, 0))
		return;
	av_insert(&rx, &tx);
	urt_post_all_rx(&rx);
	/* The lowest free handle: the same one. */
	URT_CHECK_EQ(av_insert(&tx, &rx), peer);
	expect_only_new(&tx, &rx, peer);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

#define NOMEM_ROUNDS 12
#define NOMEM_BATCH 6
#define NOMEM_PUTS 3
/* Send window growths that fail first, on each side. */
#define NOMEM_TX_WINDOW 3

static void check_nomem(void)
{
	static uint8_t target[NOMEM_PUTS * 8 * 9000];
	struct usnic_rel_reg_mr mr = {
		.size = sizeof(mr),
		.addr = (uintptr_t)target,
		.length = sizeof(target),
		.access = USNIC_REL_ACCESS_REMOTE_WRITE,
	};
	uint32_t mtu, next_rx = 1, id = 1;
	struct usnic_rel_cqe cqe;
	struct urt_ep tx, rx;
	int peer;

	printf("nomem: allocation failures part-way through messages and PUTs\n");
	/* 8 receive buffers and a 16-entry CQ: one leak and the run stalls. */
	if (ep_open(&tx, 0, 16, 0) || ep_open(&rx, 0, 16, 8))
		return;
	mtu = tx.info.mtu[USNIC_REL_CHAN_DATA];
	URT_CHECK(mtu <= 9000);
	peer = av_insert(&tx, &rx);
	av_insert(&rx, &tx);
	urt_post_all_rx(&rx);
	mr.ep_id = rx.info.ep_id;
	URT_CHECK_EQ(urt_ioctl(rx.fd, USNIC_REL_IOC_REG_MR, &mr), 0);
	URT_CHECK_EQ(urt_fault_set(tx.info.debug_id, "nomem_every", 3), 0);
	/* The target's answers to the PUTs too. */
	URT_CHECK_EQ(urt_fault_set(rx.info.debug_id, "nomem_every", 2), 0);
	URT_CHECK_EQ(urt_fault_set(tx.info.debug_id, "tx_window_nomem_next", NOMEM_TX_WINDOW), 0);
	URT_CHECK_EQ(urt_fault_set(rx.info.debug_id, "tx_window_nomem_next", NOMEM_TX_WINDOW), 0);

	for (int round = 0; round < NOMEM_ROUNDS; round++) {
		uint32_t slot = 64 * 1024, base = id, put_len = 6 * mtu + 11;
		int pending = NOMEM_BATCH + NOMEM_PUTS;
		long long end = now_ms() + DEADLINE_MS;

		for (int i = 0; i < NOMEM_BATCH; i++, id++)
			queue_msg(&tx, USNIC_REL_CHAN_DATA, peer, id, (uint32_t)i * slot,
				  1 + (id * 7919) % (7 * mtu));
		for (int i = 0; i < NOMEM_PUTS; i++) {
			uint32_t off = (uint32_t)(NOMEM_BATCH + i) * slot;
			struct usnic_rel_sqe sqe = {
				.opcode = USNIC_REL_OP_PUT,
				.peer = (uint32_t)peer,
				.user_ctx = 1000 + (uint64_t)i,
				.len = put_len,
				.staging_off = off,
				.rkey = mr.rkey,
				.remote_off = (uint64_t)i * put_len,
			};

			for (uint32_t b = 0; b < put_len; b++)
				staging(&tx)[off + b] =
					urt_pattern((uint32_t)round, put_len, b + i);
			urt_queue_sqe(&tx, USNIC_REL_CHAN_DATA, &sqe);
		}
		ring(&tx, USNIC_REL_CHAN_DATA);
		while (pending > 0 || next_rx < id) {
			bool progress = false;

			if (now_ms() > end) {
				URT_CHECK(!"nomem round finished in time");
				printf("  round %d: %d sends pending, message %u expected\n", round,
				       pending, next_rx);
				/* Still failing allocations now: a retry that never succeeds. */
				for (int k = 0; k < 2; k++) {
					printf("  sender: nomem %lld window_no_memory %lld; "
					       "target: nomem %lld window_no_memory %lld\n",
					       urt_fault_count(&tx, "nomem"),
					       urt_counter(tx.info.debug_id, "window_no_memory"),
					       urt_fault_count(&rx, "nomem"),
					       urt_counter(rx.info.debug_id, "window_no_memory"));
					usleep(200 * 1000);
				}
				goto out;
			}
			while (urt_cq_take(&tx, &cqe)) {
				URT_CHECK_EQ(cqe.status, 0);
				if (cqe.user_ctx < 1000)
					URT_CHECK(cqe.user_ctx >= base && cqe.user_ctx < id);
				pending--;
				progress = true;
			}
			while (urt_cq_take(&rx, &cqe)) {
				URT_CHECK_EQ(cqe.status, 0);
				URT_CHECK_EQ(cqe.imm, next_rx);
				URT_CHECK(msg_ok(&rx, &cqe));
				next_rx++;
				URT_CHECK_EQ(urt_rx_give_back(&rx, cqe.buf), 0);
				progress = true;
			}
			if (!progress)
				usleep(500);
		}
		for (int i = 0; i < NOMEM_PUTS; i++)
			for (uint32_t b = 0; b < put_len; b++)
				if (target[i * put_len + b] !=
				    urt_pattern((uint32_t)round, put_len, b + i)) {
					URT_CHECK(!"PUT bytes landed");
					goto out;
				}
	}
out:
	printf("  %u messages, %d PUTs; allocations failed: %lld (sender), %lld (target); "
	       "send window growths failed: %lld (sender), %lld (target)\n",
	       next_rx - 1, NOMEM_ROUNDS * NOMEM_PUTS, urt_fault_count(&tx, "nomem"),
	       urt_fault_count(&rx, "nomem"), urt_fault_count(&tx, "tx_window_nomem"),
	       urt_fault_count(&rx, "tx_window_nomem"));
	URT_CHECK(urt_fault_count(&tx, "nomem") > 0);
	URT_CHECK_EQ(next_rx, id);
	URT_CHECK(urt_fault_count(&rx, "nomem") > 0);
	/* Each side's send window could not grow when it first had to, and more. */
	URT_CHECK_EQ(urt_fault_count(&tx, "tx_window_nomem"), NOMEM_TX_WINDOW);
	URT_CHECK_EQ(urt_fault_count(&rx, "tx_window_nomem"), NOMEM_TX_WINDOW);
	URT_CHECK(urt_counter(tx.info.debug_id, "window_no_memory") >= NOMEM_TX_WINDOW);
	URT_CHECK(urt_counter(rx.info.debug_id, "window_no_memory") >= NOMEM_TX_WINDOW);
	URT_CHECK_EQ(urt_fault_set(tx.info.debug_id, "nomem_every", 0), 0);
	URT_CHECK_EQ(urt_fault_set(rx.info.debug_id, "nomem_every", 0), 0);
	URT_CHECK_EQ(urt_counter(rx.info.debug_id, "rx_msg_aborted"), 0);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

#define SLOW_MSGS 300

/*
 * Send SLOW_MSGS small messages to F (and as many to S if @s): returns the
 * milliseconds until F had them all and their sends completed, or -1.
 */
static long long slow_run(struct urt_ep *tx, struct urt_ep *f, uint32_t to_f, uint32_t to_s, bool s)
{
	long long start = now_ms(), end = start + DEADLINE_MS;
	uint32_t sent = 0, got = 0, done = 0;
	struct usnic_rel_cqe cqe;

	while ((got < SLOW_MSGS || done < SLOW_MSGS) && now_ms() < end) {
		/* At most 32 of F's at a time: the rings stay small. */
		while (sent < SLOW_MSGS && sent - got < 32) {
			if (s)
				queue_inline(tx, USNIC_REL_CHAN_DATA, to_s, 100000 + sent);
			queue_inline(tx, USNIC_REL_CHAN_DATA, to_f, sent);
			sent++;
		}
		ring(tx, USNIC_REL_CHAN_DATA);
		while (urt_cq_take(f, &cqe)) {
			URT_CHECK_EQ(cqe.status, 0);
			URT_CHECK_EQ(cqe.imm, got);
			got++;
			URT_CHECK_EQ(urt_rx_give_back(f, cqe.buf), 0);
		}
		/* F's completions; S's stay outstanding while S is alive. */
		while (urt_cq_take(tx, &cqe)) {
			URT_CHECK_EQ(cqe.status, 0);
			URT_CHECK(cqe.user_ctx < 100000);
			done++;
		}
		usleep(100);
	}
	URT_CHECK_EQ(got, SLOW_MSGS);
	URT_CHECK_EQ(done, SLOW_MSGS);
	return got == SLOW_MSGS ? now_ms() - start : -1;
}

static void check_slow(void)
{
	long long alone, beside, parked;
	struct urt_ep tx, f, s;
	struct usnic_rel_cqe cqe;
	int to_f, to_s, failed = 0;

	printf("slow: a peer that never returns buffers beside one that does\n");
	if (ep_open(&tx, 0, 2048, 0) || ep_open(&f, 0, 0, 0) || ep_open(&s, 0, 0, 0))
		return;
	to_f = av_insert(&tx, &f);
	to_s = av_insert(&tx, &s);
	av_insert(&f, &tx);
	av_insert(&s, &tx);
	urt_post_all_rx(&f);

	alone = slow_run(&tx, &f, to_f, to_s, false);
	beside = slow_run(&tx, &f, to_f, to_s, true);
	parked = urt_counter(tx.info.debug_id, "tx_parked");
	printf("  F alone: %lld ms for %d messages; beside S: %lld ms; sends parked on S: %lld\n",
	       alone, SLOW_MSGS, beside, parked);
	/* F was served while S lived: not once S was declared dead. */
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "peers_dead"), 0);
	URT_CHECK(parked >= SLOW_MSGS - 16);
	URT_CHECK_EQ(urt_counter(s.info.debug_id, "rx_messages"), 0);

	/* Everything sent to S completes, with an error, when S is removed. */
	URT_CHECK_EQ(urt_av_remove(&tx, (uint32_t)to_s), 0);
	while (failed < SLOW_MSGS && urt_cq_next(&tx, &cqe, 10000) == 0) {
		URT_CHECK_EQ(cqe.status, -ECANCELED);
		URT_CHECK(cqe.user_ctx >= 100000);
		failed++;
	}
	URT_CHECK_EQ(failed, SLOW_MSGS);
	URT_CHECK_EQ(urt_ep_destroy(&s), 0);
	URT_CHECK_EQ(urt_ep_destroy(&f), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

#define DB_MSGS 3000

static void check_doorbell(void)
{
	struct urt_ep tx, rx;
	struct usnic_rel_cqe cqe;
	uint32_t got = 0;
	long long last = now_ms();
	int peer, status;
	pid_t child;

	printf("doorbell: two buffers, DB_RX only when NEED_DOORBELL is seen\n");
	if (ep_open(&tx, 0, 0, 0) || ep_open(&rx, 0, 0, 2))
		return;
	peer = av_insert(&tx, &rx);
	av_insert(&rx, &tx);
	URT_CHECK_EQ(urt_fault_set(tx.info.debug_id, "reorder", 200000), 0);
	urt_post_all_rx(&rx);
	child = fork();
	if (child == 0) {
		/* Only this child's own checks decide its exit status. */
		urt_failures = 0;
		uint32_t *head = urt_ring_head(&tx, USNIC_REL_REGION_SQ_DATA);
		uint32_t *tail = urt_ring_tail(&tx, USNIC_REL_REGION_SQ_DATA);
		uint32_t done = 0, i = 0;
		long long end = now_ms() + 4 * DEADLINE_MS;

		/* Completions are taken while ringing: they free the CQ slots sends need. */
		while (done < DB_MSGS && now_ms() < end) {
			while (i < DB_MSGS && *tail - __atomic_load_n(head, __ATOMIC_ACQUIRE) < 16)
				queue_inline(&tx, USNIC_REL_CHAN_DATA, peer, i++);
			URT_CHECK(urt_doorbell(&tx, 1U << USNIC_REL_CHAN_DATA) >= 0);
			while (urt_cq_take(&tx, &cqe)) {
				URT_CHECK_EQ(cqe.status, 0);
				done++;
			}
			usleep(100);
		}
		URT_CHECK_EQ(done, DB_MSGS);
		_exit(urt_failures ? 1 : 0);
	}
	while (got < DB_MSGS && now_ms() - last < 30000) {
		if (urt_cq_next(&rx, &cqe, 100))
			continue;
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.imm, got);
		got++;
		last = now_ms();
		URT_CHECK_EQ(urt_rx_give_back(&rx, cqe.buf), 0);
	}
	printf("  %u of %d messages; rx_no_buf %lld\n", got, DB_MSGS,
	       urt_counter(rx.info.debug_id, "rx_no_buf"));
	if (got < DB_MSGS) {
		uint32_t *fr = (uint32_t *)ep_region_hdr(&rx, USNIC_REL_REGION_RX_FREE);

		printf("  rx_free head %u tail %u flags %u\n", fr[0], fr[16], fr[17]);
		dump_counters("tx", &tx);
		dump_counters("rx", &rx);
	}
	URT_CHECK_EQ(got, DB_MSGS);
	if (got < DB_MSGS)
		kill(child, SIGKILL);
	URT_CHECK_EQ(waitpid(child, &status, 0), child);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

#define CQF_MSGS 300
#define CQF_CQ 16

static uint32_t cq_used(struct urt_ep *ep)
{
	return __atomic_load_n(urt_ring_tail(ep, USNIC_REL_REGION_CQ), __ATOMIC_ACQUIRE) -
	       *urt_ring_head(ep, USNIC_REL_REGION_CQ);
}

/*
 * The CQ fills while packets wait in the backlog: a receiver with plenty of
 * buffers but a 16-entry CQ leaves it full until the kernel has set
 * NEED_DOORBELL, looks at the backlog (debugfs), then takes one completion
 * and rings DB_RX only when it sees the flag, and again. Every message
 * arrives once, in order; the backlog was seen holding packets.
 */
static void check_cqfull(void)
{
	struct urt_ep tx, rx;
	struct usnic_rel_cqe cqe;
	uint32_t got = 0, fulls = 0, fulls_with_backlog = 0;
	long long last = now_ms();
	int peer, rx_peer, status;
	pid_t child;

	printf("cqfull: a %d-entry CQ left full, backlog flushed by the doorbell\n", CQF_CQ);
	if (ep_open(&tx, 0, 0, 0) || ep_open(&rx, 0, CQF_CQ, 256))
		return;
	URT_CHECK_EQ(rx.info.cq_entries, CQF_CQ);
	peer = av_insert(&tx, &rx);
	rx_peer = av_insert(&rx, &tx);
	/* Out-of-order arrivals are held, then backlogged when the CQ is full. */
	URT_CHECK_EQ(urt_fault_set(tx.info.debug_id, "reorder", 300000), 0);
	urt_post_all_rx(&rx);
	child = fork();
	if (child == 0) {
		urt_failures = 0;
		uint32_t *head = urt_ring_head(&tx, USNIC_REL_REGION_SQ_DATA);
		uint32_t *tail = urt_ring_tail(&tx, USNIC_REL_REGION_SQ_DATA);
		uint32_t done = 0, i = 0;
		long long end = now_ms() + 4 * DEADLINE_MS;

		while (done < CQF_MSGS && now_ms() < end) {
			while (i < CQF_MSGS && *tail - __atomic_load_n(head, __ATOMIC_ACQUIRE) < 64)
				queue_inline(&tx, USNIC_REL_CHAN_DATA, peer, i++);
			URT_CHECK(urt_doorbell(&tx, 1U << USNIC_REL_CHAN_DATA) >= 0);
			while (urt_cq_take(&tx, &cqe)) {
				URT_CHECK_EQ(cqe.status, 0);
				done++;
			}
			usleep(200);
		}
		URT_CHECK_EQ(done, CQF_MSGS);
		_exit(urt_failures ? 1 : 0);
	}
	while (got < CQF_MSGS && now_ms() - last < 30000) {
		uint32_t *fr = (uint32_t *)ep_region_hdr(&rx, USNIC_REL_REGION_RX_FREE);
		bool full = cq_used(&rx) == CQF_CQ && (__atomic_load_n(&fr[17], __ATOMIC_ACQUIRE) &
						       USNIC_REL_RING_F_NEED_DOORBELL);
		bool last_ones = got + cq_used(&rx) == CQF_MSGS;

		if (!full && !last_ones) {
			usleep(1000);
			continue;
		}
		if (full) {
			/* What waits behind the full CQ: held until the doorbell. */
			fulls++;
			fulls_with_backlog += backlog_of(&rx, rx_peer) > 0;
		}
		/*
		 * One slot at a time while full: a run of held packets that the
		 * next gap-filling packet releases overflows into the backlog.
		 */
		while (urt_cq_take(&rx, &cqe)) {
			uint32_t v;

			URT_CHECK_EQ(cqe.status, 0);
			URT_CHECK_EQ(cqe.imm, got);
			memcpy(&v, urt_rx_buf(&rx, cqe.buf), 4);
			URT_CHECK_EQ(v, got);
			got++;
			last = now_ms();
			URT_CHECK_EQ(urt_rx_give_back(&rx, cqe.buf), 0);
			if (!last_ones)
				break;
		}
	}
	printf("  %u of %d messages; CQ full %u times, %u of them with a backlog; rx_no_buf "
	       "%lld\n",
	       got, CQF_MSGS, fulls, fulls_with_backlog,
	       urt_counter(rx.info.debug_id, "rx_no_buf"));
	URT_CHECK_EQ(got, CQF_MSGS);
	URT_CHECK(fulls_with_backlog > 0);
	if (got < CQF_MSGS)
		kill(child, SIGKILL);
	URT_CHECK_EQ(waitpid(child, &status, 0), child);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Nothing more: no message twice. */
	URT_CHECK_EQ(urt_cq_next(&rx, &cqe, 500), -ETIMEDOUT);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

/* The longest wait for the peer to outlive both limits. */
#define PERSIST_MAX_MS 30000

/*
 * persist: a receiver that posts no buffers for seconds, far longer than
 * retry_limit timeouts and stall_timeout_ms (delivery.sh loads the module
 * with both short for this case), is slow, not dead: it answers each resend
 * with an RNR ACK, as a TCP receiver answers zero-window probes: the
 * sender's persist probes (it holds every packet, so none is resent). Once
 * it posts buffers, every parked message arrives whole.
 */
static void check_persist(void)
{
	long long limit = urt_file_number("/sys/module/usnic_rel/parameters/retry_limit");
	long long stall = urt_file_number("/sys/module/usnic_rel/parameters/stall_timeout_ms");
	struct usnic_rel_cqe cqe;
	struct urt_ep tx, rx;
	int peer, n, got = 0;
	long long start;

	printf("persist: a receiver out of buffers for seconds is slow, not dead\n");
	/* The module as delivery.sh loads it: both limits passed well within the wait. */
	URT_CHECK(limit > 0 && stall > 0 && stall < PERSIST_MAX_MS / 4);
	if (ep_open(&tx, 0, 0, 0) || ep_open(&rx, 0, 0, 0))
		return;
	peer = av_insert(&tx, &rx);
	greet(&rx, &tx, (uint32_t)av_insert(&rx, &tx));
	n = fill_window(&tx, peer);
	/*
	 * Until the peer has outlived both limits: the RTO (hence how many
	 * timeouts fit in a given time) follows the RTT, which load inflates.
	 */
	start = now_ms();
	while (now_ms() - start < PERSIST_MAX_MS && !urt_counter(tx.info.debug_id, "peers_dead") &&
	       (now_ms() - start < 2 * stall ||
		urt_counter(tx.info.debug_id, "persist_probes") <= limit ||
		urt_counter(tx.info.debug_id, "rnr_acks_received") <= limit))
		usleep(20000);
	printf("  after %lld ms: persist_probes %lld, retx_timeout %lld, rnr_acks_received %lld, "
	       "peers_dead %lld (stalled %lld)\n",
	       now_ms() - start, urt_counter(tx.info.debug_id, "persist_probes"),
	       urt_counter(tx.info.debug_id, "retx_timeout"),
	       urt_counter(tx.info.debug_id, "rnr_acks_received"),
	       urt_counter(tx.info.debug_id, "peers_dead"),
	       urt_counter(tx.info.debug_id, "peers_stalled"));
	/* More timeouts than retry_limit, and older than stall_timeout_ms. */
	URT_CHECK(urt_counter(tx.info.debug_id, "persist_probes") > limit);
	URT_CHECK(urt_counter(tx.info.debug_id, "rnr_acks_received") > limit);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "peers_dead"), 0);
	urt_post_all_rx(&rx);
	while (got < n && !urt_cq_next(&rx, &cqe, 20000)) {
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.imm, (uint32_t)got + 1);
		URT_CHECK(msg_ok(&rx, &cqe));
		got++;
	}
	URT_CHECK_EQ(got, n);
	expect_failures(&tx, n, 0);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "peers_dead"), 0);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

#define TRICKLE_MSGS 3000
#define TRICKLE_BUFS 4

/* Packets @ep sent again, for any reason: timer, ACKs, tail probes. */
static long long resends(struct urt_ep *ep)
{
	return urt_counter(ep->info.debug_id, "retx_timeout") +
	       urt_counter(ep->info.debug_id, "retx_fast") +
	       urt_counter(ep->info.debug_id, "retx_probe");
}

static void check_trickle(void)
{
	long long end = now_ms() + DEADLINE_MS;
	uint32_t sent = 0, got = 0, done = 0;
	struct usnic_rel_cqe cqe;
	struct urt_ep tx, rx;
	int peer;

	printf("trickle: a reader that returns buffers slowly, a fast short sender\n");
	if (ep_open(&tx, 0, 0, 0) || ep_open(&rx, 0, 0, TRICKLE_BUFS))
		return;
	peer = av_insert(&tx, &rx);
	greet(&rx, &tx, (uint32_t)av_insert(&rx, &tx));
	urt_post_all_rx(&rx);
	while ((got < TRICKLE_MSGS || done < TRICKLE_MSGS) && now_ms() < end) {
		while (sent < TRICKLE_MSGS && sent - done < 64)
			queue_inline(&tx, USNIC_REL_CHAN_DATA, peer, sent++);
		ring(&tx, USNIC_REL_CHAN_DATA);
		while (urt_cq_take(&tx, &cqe)) {
			URT_CHECK_EQ(cqe.status, 0);
			done++;
		}
		if (!urt_cq_take(&rx, &cqe)) {
			usleep(100);
			continue;
		}
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.imm, got);
		URT_CHECK_EQ(cqe.len, 4);
		URT_CHECK(!memcmp(urt_rx_buf(&rx, cqe.buf), &got, 4));
		got++;
		/* The pause before the buffer comes back. */
		usleep(300);
		URT_CHECK_EQ(urt_rx_give_back(&rx, cqe.buf), 0);
	}
	printf("  got %u, completed %u; tx: resends %lld, tx_packed_messages %lld, "
	       "persist_probes %lld, rnr_acks_received %lld; rx: rx_no_buf %lld, "
	       "rx_held_in_order %lld, rnr_acks_sent %lld\n",
	       got, done, resends(&tx), urt_counter(tx.info.debug_id, "tx_packed_messages"),
	       urt_counter(tx.info.debug_id, "persist_probes"),
	       urt_counter(tx.info.debug_id, "rnr_acks_received"),
	       urt_counter(rx.info.debug_id, "rx_no_buf"),
	       urt_counter(rx.info.debug_id, "rx_held_in_order"),
	       urt_counter(rx.info.debug_id, "rnr_acks_sent"));
	URT_CHECK_EQ(got, TRICKLE_MSGS);
	URT_CHECK_EQ(done, TRICKLE_MSGS);
	/* Exactly once: nothing more comes. */
	URT_CHECK_EQ(urt_cq_next(&rx, &cqe, 300), -ETIMEDOUT);
	/* The reader was the bottleneck: buffers ran out, often. */
	URT_CHECK(urt_counter(rx.info.debug_id, "rx_no_buf") > 0);
	URT_CHECK_EQ(resends(&tx), 0);
	URT_CHECK_EQ(urt_counter(tx.info.debug_id, "peers_dead"), 0);
	URT_CHECK_EQ(urt_ep_destroy(&rx), 0);
	URT_CHECK_EQ(urt_ep_destroy(&tx), 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "reset", check_reset },     { "remove", check_remove },     { "nomem", check_nomem },
	{ "slow", check_slow },	      { "doorbell", check_doorbell }, { "cqfull", check_cqfull },
	{ "trickle", check_trickle }, { "persist", check_persist },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		bool run = argc < 2;

		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], cases[c].name);
		if (run)
			cases[c].fn();
		while (nr_fds)
			close(dev_fds[--nr_fds]);
	}
	return urt_done("vm_delivery");
}
