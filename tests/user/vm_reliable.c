// SPDX-License-Identifier: MIT
/*
 * In-VM test: reliable, in-order, exactly-once delivery between two processes
 * on both channels, messages from 0 B to the maximum, whatever the network in
 * between does (the caller sets up netem loss, duplication and reordering).
 *
 * Usage: vm_reliable rx|tx LOCAL_IP LOCAL_PORT REMOTE_IP REMOTE_PORT COUNT [MIN_RETX]
 * The receiver checks every byte, the order on each channel and that no message
 * comes twice; the sender checks that every send completes successfully and,
 * with MIN_RETX, that at least that many packets had to be sent again; a
 * negative MIN_RETX requires that none was found lost by the ACKs (a
 * lossless path, however it reorders: no fast retransmit).
 * VM_RELIABLE_DONE names a file the caller creates, holding the sender's
 * exit status, once the sender is done: the receiver then stays until it
 * exists, and gives up (failing, saying what it had) when nothing comes
 * for DONE_GRACE_S after it appeared, instead of waiting out its deadline.
 *
 * VM_RELIABLE_FAULT="drop=PPM,duplicate=PPM,reorder=PPM" sets the module's
 * fault injection on this process's endpoint (debugfs ep<N>/fault_*) after
 * checking that out-of-range rates are refused; at the end each fault asked
 * for must have happened at least once (ep<N>/fault).
 * "xmit_nomem_next=N" fails the sender's next N skb allocations: the
 * packets never leave the host and must be resent early, not recovered by
 * the timer, probes or SACKs; "gso_nomem_next=N" fails only those of
 * GSO runs, which must then go packet by packet without any send error.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "urt.h"
#include "urt_ep.h"

#define DEADLINE_S 600
/* After the sender is done, how long the receiver waits for the rest. */
#define DONE_GRACE_S 10

static uint32_t max_msg[USNIC_REL_NR_CHANS];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Message @i: its channel and its length, 0 B up to the channel's maximum. */
static int msg_chan(uint32_t i)
{
	return i % 3 == 0 ? USNIC_REL_CHAN_CMD : USNIC_REL_CHAN_DATA;
}

static uint32_t msg_len(uint32_t i)
{
	static const uint32_t sizes[] = { 0,   1,    7,	   64,	 65,   700,  767,  768,
					  769, 1400, 1500, 3000, 8192, 9000, 20000 };
	uint32_t max = max_msg[msg_chan(i)];

	if (i % 17 == 16)
		return max;
	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))] % (max + 1);
}

static int family_of(const char *ip)
{
	return strchr(ip, ':') ? AF_INET6 : AF_INET;
}

static void print_counters(const char *who, struct urt_ep *ep)
{
	static const char *const names[] = {
		"tx_packets",	    "tx_gso_runs",     "rx_packets",
		"rx_messages",	    "retx_timeout",    "retx_fast",
		"retx_probe",	    "acks_standalone", "acks_piggybacked",
		"acks_delayed",	    "rx_duplicate",    "rx_out_of_order",
		"rx_out_of_window", "rx_no_buf",       "rx_bad_ack",
		"rx_bad_header",    "peers_dead",      "cwnd_fast_recoveries",
		"cwnd_timeouts",    "tx_errors",       "tx_local_resends",
		"tx_gso_fallbacks", "retx_spurious",   "acks_inline",
		"tx_work_runs",
	};

	printf("%s counters:", who);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf(" %s=%lld", names[i], urt_counter(ep->info.debug_id, names[i]));
	printf("\n");

	char path[96], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/peers", ep->info.debug_id);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s %s", who, line);
	fclose(f);
}

#define NR_FAULTS 5
#define NR_RATES 3 /* the first knobs are rates in ppm */
enum {
	F_XMIT_NOMEM = 3,
	F_GSO_NOMEM
};
static const char *const fault_knobs[NR_FAULTS] = { "drop", "duplicate", "reorder",
						    "xmit_nomem_next", "gso_nomem_next" };
static const char *const fault_done[NR_FAULTS] = { "dropped", "duplicated", "reordered",
						   "xmit_nomem", "gso_nomem" };
static int fault_on[NR_FAULTS];
static int xmit_nomem_next;

/* Apply $VM_RELIABLE_FAULT to @ep: "drop=100000,reorder=50000". */
static void setup_faults(struct urt_ep *ep)
{
	const char *spec = getenv("VM_RELIABLE_FAULT");
	uint32_t id = ep->info.debug_id;
	char buf[128], *tok, *save;

	if (!spec || !*spec)
		return;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int k;

		for (k = 0; k < NR_FAULTS; k++)
			if (eq && !strncmp(tok, fault_knobs[k], eq - tok) &&
			    strlen(fault_knobs[k]) == (size_t)(eq - tok))
				break;
		URT_CHECK(k < NR_FAULTS);
		if (k == NR_FAULTS)
			continue;
		/* Rates are parts per million: anything else is refused. */
		URT_CHECK_EQ(urt_fault_set(id, fault_knobs[k], k < NR_RATES ? 1000001 : 1ULL << 31),
			     -EINVAL);
		URT_CHECK_EQ(urt_fault_set_str(id, fault_knobs[k], "-1"), -EINVAL);
		URT_CHECK_EQ(urt_fault_set_str(id, fault_knobs[k], "lots"), -EINVAL);
		fault_on[k] = atoi(eq + 1) > 0;
		/* After the pairing (run_tx): HELLOs are left to their timer. */
		if (k == F_XMIT_NOMEM) {
			xmit_nomem_next = atoi(eq + 1);
			continue;
		}
		URT_CHECK_EQ(urt_fault_set_str(id, fault_knobs[k], eq + 1), 0);
		printf("fault_%s=%s on ep%u\n", fault_knobs[k], eq + 1, ep->info.debug_id);
	}
}

static void check_faults(const char *who, struct urt_ep *ep)
{
	for (int k = 0; k < NR_FAULTS; k++) {
		long long n = urt_fault_count(ep, fault_done[k]);

		printf("%s fault %s=%lld\n", who, fault_done[k], n);
		if (fault_on[k])
			URT_CHECK(n > 0);
	}
}

/*
 * The receiver's ACKs owed at once (every few packets, a gap, a duplicate)
 * leave from its receive softirq; with a fault set up on its endpoint they
 * go through the work item, which injects faults. (xmit_nomem is applied
 * by the sender only.)
 */
static void check_inline_acks(struct urt_ep *ep, uint32_t count)
{
	long long inl = urt_counter(ep->info.debug_id, "acks_inline");
	long long alone = urt_counter(ep->info.debug_id, "acks_standalone");
	bool faults = false;

	for (int k = 0; k < NR_FAULTS; k++)
		faults |= k != F_XMIT_NOMEM && fault_on[k];
	URT_CHECK(inl >= 0 && inl <= alone);
	if (faults)
		URT_CHECK_EQ(inl, 0);
	else if (count >= 100)
		URT_CHECK(inl > 0);
}

/*
 * The sender is done (the caller created $VM_RELIABLE_DONE, writing the
 * sender's exit status in it) and nothing came for DONE_GRACE_S: what was
 * acknowledged is delivered as soon as buffers are given back, so nothing
 * more will come. Says so once; returns whether to give up.
 */
static bool sender_gone(const char *done, double last_cqe, const uint32_t *next, uint32_t got,
			uint32_t count)
{
	uint32_t want[USNIC_REL_NR_CHANS];
	char status[32] = "?";
	FILE *f;

	if (!done || now_s() - last_cqe < DONE_GRACE_S || access(done, F_OK))
		return false;
	for (int c = 0; c < USNIC_REL_NR_CHANS; c++)
		for (want[c] = next[c]; want[c] < count && msg_chan(want[c]) != c;)
			want[c]++;
	f = fopen(done, "r");
	if (f) {
		if (!fgets(status, sizeof(status), f))
			snprintf(status, sizeof(status), "?");
		status[strcspn(status, "\n")] = 0;
		fclose(f);
	}
	fprintf(stderr,
		"rx: the sender finished (exit status %s) and nothing came for %d s: giving up "
		"with %u of %u messages, expecting message %u on channel 0 and %u on channel 1\n",
		status, DONE_GRACE_S, got, count, want[0], want[1]);
	return true;
}

static int run_rx(struct urt_ep *ep, uint32_t peer, uint32_t count)
{
	uint32_t next[USNIC_REL_NR_CHANS] = { 0, 1 };
	uint32_t got = 0, bad = 0;
	struct usnic_rel_cqe cqe;
	double deadline = now_s() + DEADLINE_S, last_cqe = now_s();
	const char *done = getenv("VM_RELIABLE_DONE");

	urt_post_all_rx(ep);
	while (got < count && now_s() < deadline) {
		if (urt_cq_next(ep, &cqe, 1000)) {
			if (sender_gone(done, last_cqe, next, got, count))
				break;
			continue;
		}
		last_cqe = now_s();
		if (cqe.opcode != USNIC_REL_OP_RECV || cqe.status || cqe.peer != peer ||
		    cqe.channel >= USNIC_REL_NR_CHANS) {
			fprintf(stderr, "rx: unexpected cqe op %u status %d peer %u\n", cqe.opcode,
				cqe.status, cqe.peer);
			bad++;
			continue;
		}
		uint32_t i = (uint32_t)cqe.imm;
		int chan = cqe.channel;
		const uint8_t *p = urt_rx_buf(ep, cqe.buf);

		/* Each channel is in order: the next message of this channel. */
		while (next[chan] < count && msg_chan(next[chan]) != chan)
			next[chan]++;
		if (i != next[chan] || cqe.len != msg_len(i)) {
			fprintf(stderr, "rx: chan %d got message %u len %u, expected %u len %u\n",
				chan, i, cqe.len, next[chan], msg_len(next[chan]));
			bad++;
		} else {
			for (uint32_t j = 0; j < cqe.len; j++) {
				if (p[j] != urt_pattern(i, cqe.len, j)) {
					fprintf(stderr, "rx: message %u byte %u corrupt\n", i, j);
					bad++;
					break;
				}
			}
		}
		next[chan] = i + 1;
		got++;
		urt_post_rx(ep, cqe.buf);
		if (__atomic_load_n(
			    &((struct usnic_rel_ring_hdr *)ep->region[USNIC_REL_REGION_RX_FREE])
				     ->flags,
			    __ATOMIC_ACQUIRE) &
		    USNIC_REL_RING_F_NEED_DOORBELL)
			urt_doorbell(ep, USNIC_REL_DB_RX);
	}
	/*
	 * Nothing more may come: no duplicate slipped through. Stay until the
	 * sender is done (it may still need ACKs for its last packets): the
	 * caller creates the file $VM_RELIABLE_DONE when it is.
	 */
	do {
		if (!urt_cq_next(ep, &cqe, 200)) {
			fprintf(stderr, "rx: unexpected completion after the last message\n");
			bad++;
		}
	} while (done && access(done, F_OK) && now_s() < deadline);
	URT_CHECK_EQ(got, count);
	URT_CHECK_EQ(bad, 0);
	print_counters("rx", ep);
	check_faults("rx", ep);
	check_inline_acks(ep, count);
	return 0;
}

static int run_tx(struct urt_ep *ep, uint32_t peer, uint32_t count, long long min_retx)
{
	uint32_t slots = ep->info.staging_size / max_msg[USNIC_REL_CHAN_DATA];
	uint32_t sent = 0, done = 0, failed = 0, sq_free[USNIC_REL_NR_CHANS];
	uint8_t busy[64] = { 0 };
	struct usnic_rel_cqe cqe;
	double start = now_s(), deadline = start + DEADLINE_S;

	if (slots > sizeof(busy))
		slots = sizeof(busy);
	for (int c = 0; c < USNIC_REL_NR_CHANS; c++)
		sq_free[c] = ep->info.sq_entries;
	while (done < count && now_s() < deadline) {
		/* Post what fits: a staging slot per large message. */
		while (sent < count) {
			uint32_t len = msg_len(sent), slot = 0;
			int chan = msg_chan(sent);
			struct usnic_rel_sqe sqe = {
				.opcode = USNIC_REL_OP_SEND,
				.peer = peer,
				.imm = sent,
				.len = len,
			};
			uint8_t *dst = sqe.inline_data;

			if (!sq_free[chan])
				break;
			if (len > USNIC_REL_SQE_INLINE_MAX) {
				while (slot < slots && busy[slot])
					slot++;
				if (slot == slots)
					break;
				busy[slot] = 1;
				sqe.staging_off = slot * max_msg[USNIC_REL_CHAN_DATA];
				dst = (uint8_t *)ep->region[USNIC_REL_REGION_STAGING] +
				      sqe.staging_off;
				sqe.user_ctx = slot + 1;
			} else {
				sqe.flags = USNIC_REL_SQE_INLINE;
			}
			for (uint32_t j = 0; j < len; j++)
				dst[j] = urt_pattern(sent, len, j);
			sqe.user_ctx |= (uint64_t)chan << 32;
			urt_queue_sqe(ep, chan, &sqe);
			sq_free[chan]--;
			sent++;
		}
		int ret = urt_doorbell(ep, USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA);

		if (ret < 0) {
			fprintf(stderr, "tx: doorbell: %s\n", strerror(-ret));
			return 1;
		}
		while (!urt_cq_next(ep, &cqe, done < sent ? 100 : 0)) {
			uint32_t slot = (uint32_t)cqe.user_ctx;

			if (cqe.status) {
				fprintf(stderr, "tx: send %llu failed: %s\n",
					(unsigned long long)cqe.imm, strerror(-cqe.status));
				failed++;
			}
			if (slot)
				busy[slot - 1] = 0;
			sq_free[cqe.user_ctx >> 32]++;
			done++;
			if (xmit_nomem_next) {
				URT_CHECK_EQ(urt_fault_set(ep->info.debug_id,
							   fault_knobs[F_XMIT_NOMEM],
							   xmit_nomem_next),
					     0);
				xmit_nomem_next = 0;
			}
		}
	}
	URT_CHECK_EQ(done, count);
	URT_CHECK_EQ(failed, 0);
	/* Reported for comparison within one run, never checked (TCG timings). */
	double secs = now_s() - start, bytes = 0;

	for (uint32_t i = 0; i < count; i++)
		bytes += msg_len(i);
	printf("tx: %u messages, %.0f bytes in %.3f s: goodput %.3f MB/s\n", count, bytes, secs,
	       bytes / secs / 1e6);
	print_counters("tx", ep);
	check_faults("tx", ep);
	/*
	 * Packets that never left the host are resent early, not found lost
	 * by the timer, probes or SACKs (all of them were before): those
	 * recover at most a few, from spurious timeouts of a slow kernel.
	 */
	if (fault_on[F_XMIT_NOMEM]) {
		long long local = urt_counter(ep->info.debug_id, "tx_local_resends");
		long long retx = urt_counter(ep->info.debug_id, "retx_timeout") +
				 urt_counter(ep->info.debug_id, "retx_fast") +
				 urt_counter(ep->info.debug_id, "retx_probe");

		URT_CHECK(local > 0);
		URT_CHECK(retx < local / 4);
	}
	/* A run whose skb cannot be had goes packet by packet: none refused. */
	if (fault_on[F_GSO_NOMEM]) {
		URT_CHECK_EQ(urt_counter(ep->info.debug_id, "tx_gso_fallbacks"),
			     urt_fault_count(ep, "gso_nomem"));
		URT_CHECK_EQ(urt_counter(ep->info.debug_id, "tx_errors"), 0);
	}
	if (min_retx > 0)
		URT_CHECK(urt_counter(ep->info.debug_id, "retx_timeout") +
				  urt_counter(ep->info.debug_id, "retx_fast") +
				  urt_counter(ep->info.debug_id, "retx_probe") >=
			  min_retx);
	/*
	 * Reordered, not lost: nothing is resent as found lost by the ACKs.
	 * (Probes and timeouts answer a stalled host, whose ACKs are late, not
	 * reordering; so may a recovery that a stall started and the ACKs
	 * ended before it resent anything.)
	 */
	if (min_retx < 0)
		URT_CHECK_EQ(urt_counter(ep->info.debug_id, "retx_fast"), 0);
	/* Losses are found by the ACKs (SACK evidence), not only by the timer. */
	if (min_retx > 0)
		URT_CHECK(urt_counter(ep->info.debug_id, "cwnd_fast_recoveries") >= 1);
	return 0;
}

int main(int argc, char **argv)
{
	struct urt_ep ep;
	int fd, peer;

	if (argc < 7) {
		fprintf(stderr,
			"usage: %s rx|tx LOCAL_IP LOCAL_PORT REMOTE_IP REMOTE_PORT COUNT "
			"[MIN_RETX]\n",
			argv[0]);
		return 2;
	}
	int family = family_of(argv[2]);
	uint32_t count = strtoul(argv[6], NULL, 0);

	fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);
	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done(argv[1]);
	URT_CHECK_EQ(urt_ep_create(fd, family, argv[2], atoi(argv[3]), &ep), 0);
	peer = urt_av_insert(&ep, family, argv[4], atoi(argv[5]));
	URT_CHECK(peer > 0);
	if (urt_failures)
		return urt_done(argv[1]);
	for (int c = 0; c < USNIC_REL_NR_CHANS; c++)
		max_msg[c] = ep.info.max_msg[c];
	setup_faults(&ep);
	if (!strcmp(argv[1], "rx"))
		run_rx(&ep, peer, count);
	else
		run_tx(&ep, peer, count, argc > 7 ? atoll(argv[7]) : 0);
	URT_CHECK_EQ(urt_ep_destroy(&ep), 0);
	close(fd);
	return urt_done(argv[1]);
}
