// SPDX-License-Identifier: MIT
/*
 * In-VM test: one process sends messages of many sizes on both channels to
 * another, which checks every byte, the immediate and the channel.
 *
 *   vm_msg                       both roles over lo, IPv4 then IPv6
 *   vm_msg recv|send FAMILY LOCAL_IP LOCAL_PORT PEER_IP PEER_PORT
 *                                one role, e.g. in a network namespace
 *
 * The path is not reliable yet, so the sender sends in batches the receiver
 * acknowledges, and a HELLO/READY handshake waits for the receiver to exist.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

enum {
	HELLO = 1,
	READY,
	DATA,
	ACK,
	DONE
};

#define BATCH 16
#define TYPE(imm) ((unsigned int)((imm) >> 56))
#define MKIMM(t, v) ((uint64_t)(t) << 56 | (v))

static uint8_t payload[65536];

/* Next CQE that is not a send completion; send completions must be clean. */
static int next_rx(struct urt_ep *ep, struct usnic_rel_cqe *cqe, int timeout_ms)
{
	for (;;) {
		int ret = urt_cq_next(ep, cqe, timeout_ms);

		if (ret)
			return ret;
		if (cqe->opcode == USNIC_REL_OP_RECV)
			return 0;
		URT_CHECK_EQ(cqe->opcode, USNIC_REL_OP_SEND);
		URT_CHECK_EQ(cqe->status, 0);
	}
}

static int setup(struct urt_ep *ep, int family, const char *ip, int port, const char *peer_ip,
		 int peer_port)
{
	int fd = open("/dev/usnic_rel", O_RDWR);
	int peer;

	if (fd < 0 || urt_ep_create(fd, family, ip, port, ep)) {
		fprintf(stderr, "vm_msg: cannot create endpoint %s:%d\n", ip, port);
		exit(1);
	}
	urt_post_all_rx(ep);
	peer = urt_av_insert(ep, family, peer_ip, peer_port);
	if (peer <= 0) {
		fprintf(stderr, "vm_msg: AV_INSERT %s:%d: %d\n", peer_ip, peer_port, peer);
		exit(1);
	}
	return peer;
}

static int run_recv(int family, const char *ip, int port, const char *peer_ip, int peer_port)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep ep;
	int peer = setup(&ep, family, ip, port, peer_ip, peer_port);
	unsigned int got = 0, batch = 0;

	for (;;) {
		if (next_rx(&ep, &cqe, 10000)) {
			fprintf(stderr, "vm_msg recv: timed out after %u messages\n", got);
			urt_failures++;
			break;
		}
		const uint8_t *buf = urt_rx_buf(&ep, cqe.buf);
		unsigned int type = TYPE(cqe.imm);

		URT_CHECK_EQ(cqe.peer, peer);
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK(cqe.buf < ep.info.rx_bufs);
		if (type == HELLO) {
			URT_CHECK_EQ(urt_send(&ep, USNIC_REL_CHAN_CMD, peer, NULL, 0,
					      MKIMM(READY, 0), 0),
				     0);
		} else if (type == DATA) {
			uint32_t seq = cqe.imm & 0xffffff;
			uint32_t len = (cqe.imm >> 24) & 0xffffff;
			uint32_t chan = (cqe.imm >> 48) & 0xff;
			uint32_t bad = 0;

			URT_CHECK_EQ(cqe.len, len);
			URT_CHECK_EQ(cqe.channel, chan);
			for (uint32_t i = 0; i < len && i < cqe.len; i++)
				bad += buf[i] != urt_pattern(seq, len, i);
			URT_CHECK_EQ(bad, 0);
			if (++got % BATCH == 0)
				URT_CHECK_EQ(urt_send(&ep, USNIC_REL_CHAN_CMD, peer, NULL, 0,
						      MKIMM(ACK, ++batch), 0),
					     0);
		} else if (type == DONE) {
			URT_CHECK_EQ(cqe.imm & 0xffffff, got);
			urt_post_rx(&ep, cqe.buf);
			break;
		} else {
			URT_CHECK(0);
		}
		urt_post_rx(&ep, cqe.buf);
	}
	/* Under ip netns exec, /sys is the namespace's and has no debugfs. */
	if (urt_counter(ep.info.debug_id, "rx_packets") >= 0) {
		URT_CHECK(urt_counter(ep.info.debug_id, "rx_packets") > got);
		URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_no_buf"), 0);
		URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_header"), 0);
	}
	printf("vm_msg recv: %u messages checked\n", got);
	/* Let the last ACK's completion land before the endpoint goes. */
	usleep(1000);
	return urt_done("vm_msg recv");
}

static void wait_ack(struct urt_ep *ep, unsigned int batch)
{
	struct usnic_rel_cqe cqe;

	for (;;) {
		if (next_rx(ep, &cqe, 10000)) {
			fprintf(stderr, "vm_msg send: no ACK %u\n", batch);
			urt_failures++;
			exit(urt_done("vm_msg send"));
		}
		urt_post_rx(ep, cqe.buf);
		if (TYPE(cqe.imm) == ACK) {
			URT_CHECK_EQ(cqe.imm & 0xffffff, batch);
			return;
		}
	}
}

static int run_send(int family, const char *ip, int port, const char *peer_ip, int peer_port)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep ep;
	int peer = setup(&ep, family, ip, port, peer_ip, peer_port);
	unsigned int sent = 0, batch = 0, tries;

	/* HELLO until the receiver answers READY. */
	for (tries = 0; tries < 200; tries++) {
		URT_CHECK_EQ(urt_send(&ep, USNIC_REL_CHAN_CMD, peer, NULL, 0, MKIMM(HELLO, 0), 0),
			     0);
		if (!next_rx(&ep, &cqe, 50)) {
			urt_post_rx(&ep, cqe.buf);
			if (TYPE(cqe.imm) == READY)
				break;
		}
	}
	if (tries == 200) {
		fprintf(stderr, "vm_msg send: no receiver\n");
		urt_failures++;
		return urt_done("vm_msg send");
	}

	for (int chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		uint32_t mtu = ep.info.mtu[chan];
		uint32_t sizes[] = { 0,	  1,	63,   64,   65,	  100,	   511, 767,
				     768, 1000, 1400, 1472, 4096, mtu - 1, mtu };

		for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			uint32_t len = sizes[s];

			if (len > mtu)
				continue;
			for (int k = 0; k < BATCH; k++) {
				uint32_t seq = sent & 0xffffff;

				for (uint32_t i = 0; i < len; i++)
					payload[i] = urt_pattern(seq, len, i);
				URT_CHECK_EQ(
					urt_send(&ep, chan, peer, payload, len,
						 MKIMM(DATA, (uint64_t)chan << 48 |
								     (uint64_t)len << 24 | seq),
						 sent),
					0);
				sent++;
			}
			wait_ack(&ep, ++batch);
		}
	}
	URT_CHECK_EQ(urt_send(&ep, USNIC_REL_CHAN_CMD, peer, NULL, 0, MKIMM(DONE, sent), 0), 0);
	if (urt_counter(ep.info.debug_id, "tx_packets") >= 0) {
		URT_CHECK(urt_counter(ep.info.debug_id, "tx_packets") >= sent + 2);
		URT_CHECK_EQ(urt_counter(ep.info.debug_id, "tx_errors"), 0);
	}
	printf("vm_msg send: %u messages sent, data MTU %u\n", sent,
	       ep.info.mtu[USNIC_REL_CHAN_DATA]);
	return urt_done("vm_msg send");
}

static int run_pair(int family, const char *ip)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		exit(run_recv(family, ip, 17001, ip, 17002));
	if (run_send(family, ip, 17002, ip, 17001)) {
		urt_failures++;
		kill(pid, SIGKILL);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "vm_msg: receiver failed\n");
		urt_failures++;
	}
	return urt_failures;
}

int main(int argc, char **argv)
{
	if (argc == 7) {
		int family = !strcmp(argv[2], "6") ? AF_INET6 : AF_INET;

		if (!strcmp(argv[1], "recv"))
			return run_recv(family, argv[3], atoi(argv[4]), argv[5], atoi(argv[6]));
		return run_send(family, argv[3], atoi(argv[4]), argv[5], atoi(argv[6]));
	}
	if (argc != 1) {
		fprintf(stderr, "usage: vm_msg [recv|send 4|6 IP PORT PEER_IP PEER_PORT]\n");
		return 2;
	}
	run_pair(AF_INET, "127.0.0.1");
	run_pair(AF_INET6, "::1");
	return urt_done("vm_msg");
}
