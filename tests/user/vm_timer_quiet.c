// SPDX-License-Identifier: MIT
/*
 * In-VM test: a lossless 8 B ping-pong, one message in flight at a time,
 * every byte and every completion checked. Its caller, timer_quiet.sh,
 * counts how often the connection's timers were started meanwhile: an ACK
 * carried by the answer must neither cancel nor restart them (lazy timers,
 * kmod/usnic_rel/timers.c).
 *
 * Usage: vm_timer_quiet ping|echo LOCAL_IP LOCAL_PORT REMOTE_IP REMOTE_PORT COUNT
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>

#include "urt.h"
#include "urt_ep.h"

#define WAIT_MS 20000
#define MSG_LEN 8

static void fill(uint8_t *buf, uint32_t seq)
{
	for (uint32_t i = 0; i < MSG_LEN; i++)
		buf[i] = urt_pattern(seq, MSG_LEN, i);
}

/*
 * Take completions until the receive of message @seq; a send's completion
 * is counted in *@sent_done. Returns 0, or -1 after a failure.
 */
static int wait_recv(struct urt_ep *ep, uint32_t seq, uint32_t *sent_done)
{
	struct usnic_rel_cqe cqe;
	uint8_t want[MSG_LEN];

	for (;;) {
		if (urt_cq_next(ep, &cqe, WAIT_MS)) {
			fprintf(stderr, "no completion for message %u\n", seq);
			return -1;
		}
		if (cqe.opcode != USNIC_REL_OP_RECV) {
			URT_CHECK_EQ(cqe.status, 0);
			(*sent_done)++;
			continue;
		}
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.len, MSG_LEN);
		URT_CHECK_EQ(cqe.imm, seq);
		fill(want, seq);
		URT_CHECK(!memcmp(urt_rx_buf(ep, cqe.buf), want, MSG_LEN));
		urt_post_rx(ep, cqe.buf);
		return urt_failures ? -1 : 0;
	}
}

static void run(struct urt_ep *ep, int peer, bool ping, uint32_t count)
{
	uint32_t sent_done = 0, seq;
	struct usnic_rel_cqe cqe;
	uint8_t buf[MSG_LEN];

	for (seq = 0; seq < count; seq++) {
		if (!ping && wait_recv(ep, seq, &sent_done))
			return;
		fill(buf, seq);
		URT_CHECK_EQ(urt_send(ep, USNIC_REL_CHAN_DATA, peer, buf, MSG_LEN, seq, seq), 0);
		if (ping && wait_recv(ep, seq, &sent_done))
			return;
	}
	/*
	 * A last message, not answered, carries the ACK of the last answer:
	 * otherwise the pinger would leave before its delayed ACK, and the
	 * answer would be probed for.
	 */
	if (ping) {
		fill(buf, count);
		URT_CHECK_EQ(urt_send(ep, USNIC_REL_CHAN_DATA, peer, buf, MSG_LEN, count, count),
			     0);
		count++;
	} else if (wait_recv(ep, count, &sent_done)) {
		return;
	}
	/* The last send completes with the peer's delayed ACK. */
	while (sent_done < count && !urt_cq_next(ep, &cqe, WAIT_MS)) {
		URT_CHECK(cqe.opcode != USNIC_REL_OP_RECV);
		URT_CHECK_EQ(cqe.status, 0);
		sent_done++;
	}
	URT_CHECK_EQ(sent_done, count);
	URT_CHECK_EQ(urt_counter(ep->info.debug_id, "retx_timeout") +
			     urt_counter(ep->info.debug_id, "retx_probe") +
			     urt_counter(ep->info.debug_id, "retx_fast"),
		     0);
}

int main(int argc, char **argv)
{
	struct urt_ep ep;
	int fd, peer;

	if (argc != 7 || (strcmp(argv[1], "ping") && strcmp(argv[1], "echo"))) {
		fprintf(stderr,
			"usage: %s ping|echo LOCAL_IP LOCAL_PORT REMOTE_IP REMOTE_PORT COUNT\n",
			argv[0]);
		return 2;
	}
	fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);
	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done(argv[1]);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, argv[2], atoi(argv[3]), &ep), 0);
	peer = urt_av_insert(&ep, AF_INET, argv[4], atoi(argv[5]));
	URT_CHECK(peer > 0);
	if (urt_failures)
		return urt_done(argv[1]);
	urt_post_all_rx(&ep);
	run(&ep, peer, !strcmp(argv[1], "ping"), strtoul(argv[6], NULL, 0));
	URT_CHECK_EQ(urt_ep_destroy(&ep), 0);
	close(fd);
	return urt_done(argv[1]);
}
