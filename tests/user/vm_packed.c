// SPDX-License-Identifier: MIT
/*
 * In-VM test: short sends rung by one doorbell leave packed several to a
 * packet (USNIC_REL_PKT_PACKED) and still arrive exactly as if each had
 * come alone: once, in order per peer and channel, bytes and immediate
 * intact, each with its own completion on both sides.
 *
 *   mixed   Bursts of 1-48 sends rung together, on both channels, of sizes
 *           from 0 to 1000 bytes (inline and staged; those over 256 bytes
 *           never go packed), every 13th to a second receiver: the packets
 *           end wherever the next send does not fit, and nothing moves.
 *           tx_packed_messages shows that packets carried several.
 *   starve  A receiver with three buffers, returned one at a time and
 *           slowly, against 60 sends rung at once: a packet runs out of
 *           buffers part-way, comes again (held or resent) and goes on
 *           after what was delivered: no message twice, none lost.
 *   faults  mixed with the sender dropping, duplicating and reordering
 *           5 %, 5 % and 10 % of its packets (debugfs fault_*).
 *   remove  Packed sends outstanding when the sender removes their peer:
 *           each completes once, with success only if it was delivered.
 *
 * Usage: vm_packed [CASE...] (default: all).
 */
#include <stdbool.h>
#include <time.h>

#include "urt.h"
#include "urt_ep.h"

#define DEADLINE_MS 120000
#define MIXED_MSGS 3000
#define OUTSTANDING 256
#define SLOT 1024 /* staging bytes per outstanding send */
#define TO_SECOND 13 /* every this many sends go to the second receiver */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ep_open(int *fd, struct urt_ep *ep, uint32_t rx_bufs)
{
	int ret;

	*fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);
	URT_CHECK(*fd >= 0);
	if (*fd < 0)
		return -errno;
	memset(ep, 0, sizeof(*ep));
	ep->fd = *fd;
	ep->info.size = sizeof(ep->info);
	ep->info.rx_bufs = rx_bufs;
	ep->info.cq_entries = 1024;
	urt_addr(&ep->info.addr, AF_INET, "127.0.0.1", 0);
	ret = urt_ep_create_info(ep);
	URT_CHECK_EQ(ret, 0);
	return ret;
}

static int av_insert(struct urt_ep *ep, struct urt_ep *to)
{
	int peer = urt_av_insert(ep, AF_INET, "127.0.0.1", to->info.addr.port);

	URT_CHECK(peer > 0);
	return peer;
}

/* The length of message @seq: packable and not, both sides of every edge. */
static uint32_t msg_len(uint32_t seq)
{
	static const uint32_t lens[] = { 8, 0, 1, 8, 63, 64, 65, 8, 200, 255, 256, 8, 257, 1000 };

	return lens[seq % (sizeof(lens) / sizeof(lens[0]))];
}

/* imm: the receiver (0 or 1), the channel and the sequence on that pair. */
static uint64_t msg_imm(uint32_t rx, uint32_t chan, uint32_t seq)
{
	return (uint64_t)rx << 40 | (uint64_t)chan << 32 | seq;
}

struct stream {
	struct urt_ep tx, rx[2];
	int fds[3];
	uint32_t peer[2];
	uint32_t sent, completed, received;
	uint32_t next_seq[2][USNIC_REL_NR_CHANS]; /* sender's, per receiver and channel */
	uint32_t want_seq[2][USNIC_REL_NR_CHANS]; /* receivers' */
	uint8_t done[MIXED_MSGS]; /* completions seen, by user_ctx */
};

static int stream_open(struct stream *s, uint32_t rx_bufs)
{
	memset(s, 0, sizeof(*s));
	if (ep_open(&s->fds[0], &s->tx, 0) || ep_open(&s->fds[1], &s->rx[0], rx_bufs) ||
	    ep_open(&s->fds[2], &s->rx[1], 0))
		return -1;
	for (int i = 0; i < 2; i++) {
		s->peer[i] = av_insert(&s->tx, &s->rx[i]);
		av_insert(&s->rx[i], &s->tx);
		urt_post_all_rx(&s->rx[i]);
	}
	return 0;
}

static void stream_close(struct stream *s)
{
	URT_CHECK_EQ(urt_ep_destroy(&s->rx[1]), 0);
	URT_CHECK_EQ(urt_ep_destroy(&s->rx[0]), 0);
	URT_CHECK_EQ(urt_ep_destroy(&s->tx), 0);
	for (int i = 0; i < 3; i++)
		close(s->fds[i]);
}

/* Queue send @id (user_ctx) to receiver @rx on @chan, without ringing. */
static void queue_send(struct stream *s, uint32_t id, uint32_t rx, uint32_t chan)
{
	uint32_t seq = s->next_seq[rx][chan]++;
	uint32_t len = msg_len(seq);
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.peer = s->peer[rx],
		.imm = msg_imm(rx, chan, seq),
		.user_ctx = id,
		.len = len,
	};
	uint8_t *p;

	if (len <= USNIC_REL_SQE_INLINE_MAX && seq % 3 == 0) {
		sqe.flags = USNIC_REL_SQE_INLINE;
		p = sqe.inline_data;
	} else {
		sqe.staging_off = (id % OUTSTANDING) * SLOT;
		p = (uint8_t *)s->tx.region[USNIC_REL_REGION_STAGING] + sqe.staging_off;
	}
	for (uint32_t i = 0; i < len; i++)
		p[i] = urt_pattern((uint32_t)sqe.imm, len, i);
	urt_queue_sqe(&s->tx, (int)chan, &sqe);
}

static uint32_t sq_room(struct stream *s, uint32_t chan)
{
	int r = chan == USNIC_REL_CHAN_CMD ? USNIC_REL_REGION_SQ_CMD : USNIC_REL_REGION_SQ_DATA;

	return s->tx.info.sq_entries -
	       (*urt_ring_tail(&s->tx, r) -
		__atomic_load_n(urt_ring_head(&s->tx, r), __ATOMIC_ACQUIRE));
}

/* Check one arrival at receiver @rx: the next of its pair, intact. */
static void check_arrival(struct stream *s, uint32_t rx, const struct usnic_rel_cqe *cqe)
{
	uint32_t chan = (uint32_t)(cqe->imm >> 32) & 0xff, seq = (uint32_t)cqe->imm;
	const uint8_t *p = urt_rx_buf(&s->rx[rx], cqe->buf);
	bool intact = true;

	URT_CHECK_EQ(cqe->status, 0);
	URT_CHECK_EQ(cqe->opcode, USNIC_REL_OP_RECV);
	URT_CHECK_EQ(cqe->imm >> 40, rx);
	URT_CHECK_EQ(cqe->channel, chan);
	if (chan >= USNIC_REL_NR_CHANS)
		return;
	URT_CHECK_EQ(seq, s->want_seq[rx][chan]);
	URT_CHECK_EQ(cqe->len, msg_len(seq));
	for (uint32_t i = 0; i < cqe->len; i++)
		intact &= p[i] == urt_pattern((uint32_t)cqe->imm, cqe->len, i);
	URT_CHECK(intact);
	s->want_seq[rx][chan] = seq + 1;
	s->received++;
}

/* Take what the three CQs hold; receivers give buffers back at once. */
static void drain(struct stream *s)
{
	struct usnic_rel_cqe cqe;

	while (urt_cq_take(&s->tx, &cqe)) {
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.opcode, USNIC_REL_OP_SEND);
		URT_CHECK(cqe.user_ctx < MIXED_MSGS);
		if (cqe.user_ctx >= MIXED_MSGS)
			continue;
		URT_CHECK_EQ(s->done[cqe.user_ctx], 0);
		s->done[cqe.user_ctx] = 1;
		s->completed++;
	}
	for (uint32_t rx = 0; rx < 2; rx++)
		while (urt_cq_take(&s->rx[rx], &cqe)) {
			check_arrival(s, rx, &cqe);
			URT_CHECK_EQ(urt_rx_give_back(&s->rx[rx], cqe.buf), 0);
		}
}

static void run_mixed(const char *name, bool faults)
{
	struct stream s;
	long long end = now_ms() + DEADLINE_MS;
	uint32_t burst = 1, rx, chan;
	unsigned int seed = 7;
	long long packed, packets;

	printf("%s: %d sends in bursts of 1-48, both channels, every %dth elsewhere\n", name,
	       MIXED_MSGS, TO_SECOND);
	if (stream_open(&s, 0))
		return;
	if (faults) {
		URT_CHECK_EQ(urt_fault_set(s.tx.info.debug_id, "drop", 50000), 0);
		URT_CHECK_EQ(urt_fault_set(s.tx.info.debug_id, "duplicate", 50000), 0);
		URT_CHECK_EQ(urt_fault_set(s.tx.info.debug_id, "reorder", 100000), 0);
	}
	while ((s.completed < MIXED_MSGS || s.received < MIXED_MSGS) && now_ms() < end) {
		chan = (s.sent / 100) % USNIC_REL_NR_CHANS;
		/*
		 * A staging slot is reused only once the send before in it
		 * completed: sends complete out of order across channels and
		 * receivers, and a parked send reads its slot when it leaves.
		 */
		while (s.sent < MIXED_MSGS && burst && s.sent - s.completed < OUTSTANDING &&
		       (s.sent < OUTSTANDING || s.done[s.sent - OUTSTANDING]) &&
		       sq_room(&s, chan)) {
			rx = s.sent % TO_SECOND == TO_SECOND - 1;
			queue_send(&s, s.sent, rx, chan);
			s.sent++;
			burst--;
		}
		URT_CHECK(urt_doorbell(&s.tx, USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA) >= 0);
		if (!burst)
			burst = 1 + (uint32_t)rand_r(&seed) % 48;
		drain(&s);
		usleep(50);
	}
	packed = urt_counter(s.tx.info.debug_id, "tx_packed_messages");
	packets = urt_counter(s.tx.info.debug_id, "tx_data_packets");
	printf("  sent %u completed %u received %u; %lld data packets, %lld sends packed\n", s.sent,
	       s.completed, s.received, packets, packed);
	if (faults)
		printf("  faults: dropped %lld duplicated %lld reordered %lld\n",
		       urt_fault_count(&s.tx, "dropped"), urt_fault_count(&s.tx, "duplicated"),
		       urt_fault_count(&s.tx, "reordered"));
	URT_CHECK_EQ(s.completed, MIXED_MSGS);
	URT_CHECK_EQ(s.received, MIXED_MSGS);
	/* Most sends are short and rung in bursts: many must have gone packed. */
	URT_CHECK(packed > MIXED_MSGS / 4);
	if (!faults)
		URT_CHECK(packets < MIXED_MSGS - packed / 2);
	if (faults)
		URT_CHECK(urt_fault_count(&s.tx, "dropped") > 0);
	stream_close(&s);
}

static void check_mixed(void)
{
	run_mixed("mixed", false);
}

static void check_faults(void)
{
	run_mixed("faults", true);
}

#define STARVE_MSGS 60
#define STARVE_BUFS 3

static void check_starve(void)
{
	struct stream s;
	struct usnic_rel_cqe cqe;
	long long end = now_ms() + DEADLINE_MS;
	uint32_t held[STARVE_MSGS], nr_held = 0;

	printf("starve: %d sends rung at once, %d receive buffers given back slowly\n", STARVE_MSGS,
	       STARVE_BUFS);
	if (stream_open(&s, STARVE_BUFS))
		return;
	for (uint32_t i = 0; i < STARVE_MSGS; i++) {
		/* All 8-byte sends: send i carries sequence i. */
		s.next_seq[0][USNIC_REL_CHAN_DATA] = i * 14;
		queue_send(&s, i, 0, USNIC_REL_CHAN_DATA);
	}
	URT_CHECK(urt_doorbell(&s.tx, USNIC_REL_DB_SQ_DATA) >= 0);
	while ((s.completed < STARVE_MSGS || s.received < STARVE_MSGS) && now_ms() < end) {
		while (urt_cq_take(&s.tx, &cqe)) {
			URT_CHECK_EQ(cqe.status, 0);
			s.completed++;
		}
		while (urt_cq_take(&s.rx[0], &cqe)) {
			uint32_t seq = (uint32_t)cqe.imm;

			URT_CHECK_EQ(cqe.status, 0);
			URT_CHECK_EQ(seq, s.received * 14);
			URT_CHECK_EQ(cqe.len, 8);
			s.received++;
			held[nr_held++] = cqe.buf;
		}
		/* One buffer back per pass, the oldest, after a pause. */
		usleep(3000);
		if (nr_held) {
			URT_CHECK_EQ(urt_rx_give_back(&s.rx[0], held[0]), 0);
			memmove(held, held + 1, --nr_held * sizeof(held[0]));
		}
		URT_CHECK(urt_doorbell(&s.tx, USNIC_REL_DB_SQ_DATA) >= 0);
	}
	printf("  completed %u received %u; rx_no_buf %lld, %lld sends packed\n", s.completed,
	       s.received, urt_counter(s.rx[0].info.debug_id, "rx_no_buf"),
	       urt_counter(s.tx.info.debug_id, "tx_packed_messages"));
	URT_CHECK_EQ(s.completed, STARVE_MSGS);
	URT_CHECK_EQ(s.received, STARVE_MSGS);
	URT_CHECK(urt_counter(s.rx[0].info.debug_id, "rx_no_buf") > 0);
	URT_CHECK(urt_counter(s.tx.info.debug_id, "tx_packed_messages") >= STARVE_BUFS + 1);
	stream_close(&s);
}

#define REMOVE_MSGS 40
#define REMOVE_BUFS 4

/*
 * Packed sends outstanding when their peer goes: the receiver takes a few
 * and returns no buffer, the sender removes it. Every send completes once:
 * those delivered with success, the rest with -ECANCELED.
 */
static void check_remove(void)
{
	struct stream s;
	struct usnic_rel_cqe cqe;
	long long end = now_ms() + DEADLINE_MS;
	uint32_t ok = 0, cancelled = 0;

	printf("remove: %d sends rung at once to a receiver with %d buffers, then removed\n",
	       REMOVE_MSGS, REMOVE_BUFS);
	if (stream_open(&s, REMOVE_BUFS))
		return;
	/* One exchange first: only a paired connection packs. */
	URT_CHECK_EQ(urt_send(&s.tx, USNIC_REL_CHAN_DATA, s.peer[0], "w", 1, ~0ULL, MIXED_MSGS), 0);
	URT_CHECK_EQ(urt_cq_next(&s.rx[0], &cqe, DEADLINE_MS), 0);
	URT_CHECK_EQ(urt_rx_give_back(&s.rx[0], cqe.buf), 0);
	URT_CHECK_EQ(urt_cq_next(&s.tx, &cqe, DEADLINE_MS), 0);
	URT_CHECK_EQ(cqe.status, 0);
	for (uint32_t i = 0; i < REMOVE_MSGS; i++) {
		s.next_seq[0][USNIC_REL_CHAN_DATA] = i * 14;
		queue_send(&s, i, 0, USNIC_REL_CHAN_DATA);
	}
	URT_CHECK(urt_doorbell(&s.tx, USNIC_REL_DB_SQ_DATA) >= 0);
	/* The receiver fills its buffers and keeps them. */
	while (s.received < REMOVE_BUFS && now_ms() < end)
		if (urt_cq_take(&s.rx[0], &cqe))
			s.received++;
	URT_CHECK_EQ(urt_av_remove(&s.tx, s.peer[0]), 0);
	while (ok + cancelled < REMOVE_MSGS && now_ms() < end) {
		if (!urt_cq_take(&s.tx, &cqe))
			continue;
		URT_CHECK(cqe.user_ctx < REMOVE_MSGS);
		if (cqe.user_ctx >= REMOVE_MSGS)
			continue;
		URT_CHECK_EQ(s.done[cqe.user_ctx], 0);
		s.done[cqe.user_ctx] = 1;
		if (cqe.status == 0)
			ok++;
		else if (cqe.status == -ECANCELED)
			cancelled++;
		else
			URT_CHECK_EQ(cqe.status, -ECANCELED);
	}
	printf("  received %u; completed %u with success, %u cancelled; %lld sends packed\n",
	       s.received, ok, cancelled, urt_counter(s.tx.info.debug_id, "tx_packed_messages"));
	URT_CHECK_EQ(ok + cancelled, REMOVE_MSGS);
	/* Success only for what was delivered: no more than the receiver's buffers. */
	URT_CHECK(ok <= REMOVE_BUFS);
	URT_CHECK(cancelled > 0);
	URT_CHECK(urt_counter(s.tx.info.debug_id, "tx_packed_messages") >= 2);
	stream_close(&s);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "mixed", check_mixed },
	{ "starve", check_starve },
	{ "faults", check_faults },
	{ "remove", check_remove },
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
	}
	return urt_done("vm_packed");
}
