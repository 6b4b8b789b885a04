// SPDX-License-Identifier: MIT
/*
 * In-VM test of tagged messaging (usnicrel_msg.h) between real processes on
 * lo, every protocol (tiny on the command channel, eager on the data
 * channel, rendezvous by RDMA get):
 *   order       two ranks; messages of every size from one sender match in
 *               send order, received late (all unexpected) and pre-posted;
 *   wildcards   the oldest of specific and wildcard receives wins;
 *   ssend       a synchronous send completes only once matched, also when
 *               the match is a matched probe (eager and rendezvous);
 *   cancel      a posted receive cancels, a matched one does not;
 *   truncation  -EMSGSIZE with the real length, the stream goes on;
 *   probe, waitany (also over two contexts), zero bytes, and
 *   attribute/environment limits; the second two-rank run with small
 *   limits also registers every rendezvous piecewise (UREL_MSG_RNDV_WINDOW);
 *   self        sends to UREL_MSG_SELF: buffered, waiting, posted, claimed;
 *   leftovers   close frees requests never tested or never matched (LSan);
 *   reaped      a request used after its completion was reaped is caught by
 *               ASan (no request cache in the sanitizer build), and goes
 *               unseen with the cache forced on (the control);
 *   thread      with a progress thread, a receiver that computes without
 *               calling the library still completes a rendezvous and a
 *               synchronous send to it; and a blocking receive whose
 *               message the thread dispatched is woken by it at once
 *               (urel_msg_stats() late_wakeups stays 0);
 *   serial      every rank's endpoint created UREL_EP_SERIAL (no library
 *               lock): the "two" checks, every size and protocol, default
 *               and small limits; unknown creation flags and a progress
 *               thread on a serial endpoint refused with -EINVAL;
 *   alltoall    four ranks, every rank sends every size to every other,
 *               received with ANY_PEER, per-sender order checked;
 *   big         as an unprivileged user under an 8 MiB RLIMIT_MEMLOCK: one
 *               64 MiB message (far above the channel's max_msg and the
 *               limit), and three 8 MiB ones sent at once and received in
 *               reverse order (more than the limit if each were pinned
 *               whole), go through, registered piecewise; under a 32 KiB
 *               limit, where not even one window can be pinned, the send
 *               and its receive fail with -ENOMEM instead of waiting;
 *               then four contexts of one process, each on its own
 *               endpoint, send 4 MiB each at once under the 8 MiB limit:
 *               the process's windows cannot all be pinned, so the later
 *               contexts wait for the earlier ones' windows instead of
 *               failing, one of them blocked in urel_msg_wait() on its own
 *               context (urel_msg_rndv_stats() proves the windows, the
 *               waits and that the process never pinned above the limit).
 * Usage: vm_msg_tagged [all|quick|attr|two|thread|serial|alltoall|big]; quick (for the debug
 * kernel) is one round without the 1 MiB messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "urt_job.h"

#define NSIZES 11
static const size_t sizes[NSIZES] = { 0,     1,	    8,	    256, 257,	       5000,
				      16384, 16385, 100000, 8,	 (1 << 20) + 3 };
#define MAXSZ ((1 << 20) + 3)
#define REPS 2

/* "quick" (the debug kernel): one round, nothing above 100000 bytes. */
static unsigned int nsizes = NSIZES, reps = REPS;
#define COUNT (nsizes * reps)

static size_t size_of(uint64_t seq)
{
	return sizes[seq % nsizes];
}

/* Payload of message @seq from @rank: distinct per sender and sequence. */
static void fill(uint8_t *buf, int rank, uint64_t seq)
{
	urt_fill(buf, seq * 64 + (uint64_t)rank, (uint32_t)size_of(seq));
}

static int verify(const uint8_t *buf, int rank, uint64_t seq, size_t len)
{
	return urt_verify(buf, seq * 64 + (uint64_t)rank, (uint32_t)len);
}

static uint8_t *xmalloc(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	if (!p)
		exit(3);
	return p;
}

/* Send NSIZES * REPS messages of tag @tag to @to, non-blocking, then wait for them all. */
static void send_all_start(struct urt_job *j, int to, uint64_t tag, uint8_t **bufs,
			   struct urel_msg_req **reqs)
{
	for (unsigned int i = 0; i < COUNT; i++) {
		bufs[i] = xmalloc(size_of(i));
		fill(bufs[i], j->rank, i);
		URT_CHECK_EQ(
			urel_msg_isend(j->m, j->peer[to], bufs[i], size_of(i), tag, 0, &reqs[i]),
			0);
	}
}

static void send_all_finish(uint8_t **bufs, struct urel_msg_req **reqs)
{
	URT_CHECK_EQ(urel_msg_waitall(COUNT, reqs, NULL), 0);
	for (unsigned int i = 0; i < COUNT; i++) {
		URT_CHECK(reqs[i] == NULL);
		free(bufs[i]);
	}
}

static void check_msg(struct urt_job *j, const struct urel_msg_status *st, const uint8_t *buf,
		      int from, uint64_t seq, uint64_t tag)
{
	URT_CHECK_EQ(st->error, 0);
	URT_CHECK_EQ(st->peer, j->peer[from]);
	URT_CHECK_EQ(st->tag, tag);
	URT_CHECK_EQ(st->len, size_of(seq));
	URT_CHECK_EQ(st->received, size_of(seq));
	if (verify(buf, from, seq, st->len)) {
		fprintf(stderr,
			"rank %d: message %llu from %d (%zu bytes) corrupt or out of order\n",
			j->rank, (unsigned long long)seq, from, st->len);
		urt_failures++;
	}
}

static void t_order(struct urt_job *j)
{
	struct urel_msg_req *reqs[NSIZES * REPS];
	struct urel_msg_status st[NSIZES * REPS];
	uint8_t *bufs[NSIZES * REPS];

	/* Late receives: everything is unexpected (rendezvous as a request-to-send only). */
	if (j->rank == 0) {
		send_all_start(j, 1, 1, bufs, reqs);
		urt_job_barrier(j);
		send_all_finish(bufs, reqs);
	} else {
		uint8_t *buf = xmalloc(MAXSZ);
		struct urel_msg_status s;

		urt_job_barrier(j);
		for (unsigned int i = 0; i < COUNT; i++) {
			memset(buf, 0, MAXSZ);
			URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], buf, MAXSZ, 1, 0, &s), 0);
			check_msg(j, &s, buf, 0, i, 1);
		}
		free(buf);
	}
	urt_job_barrier(j);
	/* Pre-posted receives, each buffer exactly the message's size. */
	if (j->rank == 0) {
		urt_job_barrier(j);
		send_all_start(j, 1, 2, bufs, reqs);
		send_all_finish(bufs, reqs);
	} else {
		for (unsigned int i = 0; i < COUNT; i++) {
			bufs[i] = xmalloc(size_of(i));
			URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], bufs[i], size_of(i), 2, 0,
						    &reqs[i]),
				     0);
		}
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_waitall(COUNT, reqs, st), 0);
		for (unsigned int i = 0; i < COUNT; i++) {
			check_msg(j, &st[i], bufs[i], 0, i, 2);
			free(bufs[i]);
		}
	}
}

static void t_wildcards(struct urt_job *j)
{
	if (j->rank == 0) {
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], "a", 1, 0x101), 0);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], "b", 1, 0x101), 0);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], "c", 1, 0x555), 0);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], "d", 1, 0x101), 0);
	} else {
		struct urel_msg_req *r[4];
		struct urel_msg_status st[4];
		char b[4][2] = { { 0 } };

		/* Oldest first: wildcard, specific, catch-all, then a specific again. */
		URT_CHECK_EQ(urel_msg_irecv(j->m, UREL_MSG_ANY_PEER, b[0], 2, 0x100, 0xff, &r[0]),
			     0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b[1], 2, 0x101, 0, &r[1]), 0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, UREL_MSG_ANY_PEER, b[2], 2, 0, UINT64_MAX, &r[2]),
			     0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b[3], 2, 0x101, 0, &r[3]), 0);
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_waitall(4, r, st), 0);
		URT_CHECK_EQ(b[0][0], 'a');
		URT_CHECK_EQ(b[1][0], 'b');
		URT_CHECK_EQ(b[2][0], 'c');
		URT_CHECK_EQ(b[3][0], 'd');
		URT_CHECK_EQ(st[2].tag, 0x555);
		URT_CHECK_EQ(st[0].peer, j->peer[0]);
	}
}

/* A synchronous send stays incomplete while the receiver has not matched it. */
static void t_ssend(struct urt_job *j)
{
	static const size_t lens[2] = { 100, 300000 };

	for (int k = 0; k < 2; k++) {
		size_t len = lens[k];

		if (j->rank == 0) {
			uint8_t *buf = xmalloc(len);
			struct urel_msg_req *r;
			int early = 0;

			urt_fill(buf, 77, (uint32_t)len);
			URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[1], buf, len, 0x400,
						    UREL_MSG_SYNC, &r),
				     0);
			/* Ample time for the message to reach rank 1, where nobody receives it. */
			for (int i = 0; i < 300; i++) {
				early |= urel_msg_test(r, NULL) != 0;
				if (early)
					break;
				urel_device_wait(j->dev, 2);
			}
			URT_CHECK_EQ(early, 0);
			urt_job_barrier(j); /* rank 1 may now claim */
			if (!early)
				URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
			free(buf);
		} else {
			struct urel_msg_handle *h;
			struct urel_msg_status st;
			uint8_t *buf = xmalloc(len);

			urt_job_barrier(j);
			URT_CHECK_EQ(urel_msg_mprobe(j->m, j->peer[0], 0x400, 0, &h, &st), 0);
			URT_CHECK_EQ(st.len, len);
			/* Claimed: no other receive or probe sees it. */
			URT_CHECK_EQ(urel_msg_iprobe(j->m, UREL_MSG_ANY_PEER, 0, UINT64_MAX, NULL),
				     0);
			URT_CHECK_EQ(urel_msg_mrecv(h, buf, len, &st), 0);
			URT_CHECK_EQ(st.received, len);
			URT_CHECK_EQ(urt_verify(buf, 77, (uint32_t)len), 0);
			free(buf);
		}
		urt_job_barrier(j);
	}
	/* Blocking ssend against a pre-posted receive. */
	if (j->rank == 0) {
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_ssend(j->m, j->peer[1], "s", 1, 0x401), 0);
	} else {
		struct urel_msg_req *r;
		char c = 0;

		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], &c, 1, 0x401, 0, &r), 0);
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
		URT_CHECK_EQ(c, 's');
	}
}

static void t_cancel(struct urt_job *j)
{
	if (j->rank == 0) {
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], "A", 1, 0x200), 0);
		/* Matched (the SACK proves it) before rank 1 tries to cancel. */
		URT_CHECK_EQ(urel_msg_ssend(j->m, j->peer[1], "B", 1, 0x201), 0);
		urt_job_barrier(j);
	} else {
		struct urel_msg_req *r, *r2;
		struct urel_msg_status st;
		uint64_t before, after;
		char c = 0, c2 = 0;

		URT_CHECK_EQ(urel_msg_completions(NULL, &before), -EINVAL);
		URT_CHECK_EQ(urel_msg_completions(j->m, NULL), -EINVAL);
		URT_CHECK_EQ(urel_msg_completions(j->m, &before), 0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], &c, 1, 0x200, 0, &r), 0);
		/* Nothing sent yet (rank 0 waits at the barrier): nothing completes. */
		URT_CHECK(urel_msg_progress(j->m) >= 0);
		URT_CHECK_EQ(urel_msg_completions(j->m, &after), 0);
		URT_CHECK_EQ(after, before);
		URT_CHECK_EQ(urel_msg_cancel(r), 0);
		URT_CHECK_EQ(urel_msg_cancel(r), -EBUSY);
		/* The cancel completed the receive: the count moved by one. */
		URT_CHECK_EQ(urel_msg_completions(j->m, &after), 0);
		URT_CHECK_EQ(after, before + 1);
		URT_CHECK_EQ(urel_msg_wait(r, &st), -ECANCELED);
		URT_CHECK_EQ(st.error, -ECANCELED);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], &c2, 1, 0x201, 0, &r2), 0);
		urt_job_barrier(j);
		/* The cancelled receive took nothing: a new one gets "A". */
		URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], &c, 1, 0x200, 0, &st), 0);
		URT_CHECK_EQ(c, 'A');
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_cancel(r2), -EBUSY);
		URT_CHECK_EQ(urel_msg_wait(r2, NULL), 0);
		URT_CHECK_EQ(c2, 'B');
	}
}

static void t_truncation(struct urt_job *j)
{
	static const size_t lens[3] = { 1000, 100000, 8 };

	if (j->rank == 0) {
		for (int k = 0; k < 3; k++) {
			uint8_t *buf = xmalloc(lens[k]);

			urt_fill(buf, (uint64_t)k, (uint32_t)lens[k]);
			URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], buf, lens[k], 0x300), 0);
			free(buf);
		}
	} else {
		static const size_t caps[3] = { 100, 500, 8 };
		static const int errs[3] = { -EMSGSIZE, -EMSGSIZE, 0 };

		for (int k = 0; k < 3; k++) {
			uint8_t *buf = xmalloc(caps[k] + 16);
			struct urel_msg_status st;

			memset(buf, 0xee, caps[k] + 16);
			URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], buf, caps[k], 0x300, 0, &st),
				     errs[k]);
			URT_CHECK_EQ(st.len, lens[k]);
			URT_CHECK_EQ(st.received, caps[k]);
			/* The bytes that fit are the message's first ones; nothing beyond. */
			for (size_t i = 0; i < caps[k]; i++) {
				if (buf[i] !=
				    urt_byte((uint64_t)k, (uint32_t)lens[k], (uint32_t)i)) {
					URT_CHECK(!"truncated bytes wrong");
					break;
				}
			}
			URT_CHECK_EQ(buf[caps[k]], 0xee);
			free(buf);
		}
	}
}

static void t_probe_waitany(struct urt_job *j)
{
	if (j->rank == 0) {
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], NULL, 0, 0x501), 0);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], "probe", 5, 0x600), 0);
	} else {
		struct urel_msg_req *r[3];
		struct urel_msg_status st;
		unsigned int idx = 99;
		char b[8];

		URT_CHECK_EQ(urel_msg_iprobe(j->m, UREL_MSG_ANY_PEER, 0x600, 0, &st), 0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b, 8, 0x500, 0, &r[0]), 0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], NULL, 0, 0x501, 0, &r[1]), 0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b, 8, 0x502, 0, &r[2]), 0);
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_waitany(3, r, &idx, &st), 0);
		URT_CHECK_EQ(idx, 1);
		URT_CHECK(r[1] == NULL);
		URT_CHECK_EQ(st.len, 0);
		URT_CHECK_EQ(urel_msg_cancel(r[0]), 0);
		URT_CHECK_EQ(urel_msg_cancel(r[2]), 0);
		URT_CHECK_EQ(urel_msg_waitall(3, r, NULL), -ECANCELED);
		URT_CHECK_EQ(urel_msg_probe(j->m, j->peer[0], 0x600, 0, &st), 0);
		URT_CHECK_EQ(st.len, 5);
		URT_CHECK_EQ(urel_msg_iprobe(j->m, j->peer[0], 0x600, 0, &st), 1);
		URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], b, 8, 0x600, 0, &st), 0);
		URT_CHECK(!memcmp(b, "probe", 5));
		URT_CHECK_EQ(urel_msg_iprobe(j->m, j->peer[0], 0x600, 0, &st), 0);
	}
}

/*
 * Immediate data (urel_msg_isend_data): tiny, eager and rendezvous messages
 * carry it to the receive's status, a probe reports it, and a message sent
 * without it reports 0.
 */
static void t_data(struct urt_job *j)
{
	static const size_t lens[4] = { 8, 5000, 100000, 3 };
	static const uint64_t data[4] = { 0x0123456789abcdefULL, 1, UINT64_MAX, 0 };

	if (j->rank == 0) {
		struct urel_msg_req *r[4];
		uint8_t *buf[4];

		/* Non-blocking: the receiver probes the third before taking any. */
		for (int k = 0; k < 4; k++) {
			buf[k] = xmalloc(lens[k]);
			urt_fill(buf[k], (uint64_t)k, (uint32_t)lens[k]);
			URT_CHECK_EQ(k < 3 ? urel_msg_isend_data(j->m, j->peer[1], buf[k], lens[k],
								 0x700 + k, data[k], 0, &r[k])
					   : urel_msg_isend(j->m, j->peer[1], buf[k], lens[k],
							    0x700 + k, 0, &r[k]),
				     0);
		}
		URT_CHECK_EQ(urel_msg_waitall(4, r, NULL), 0);
		for (int k = 0; k < 4; k++)
			free(buf[k]);
	} else {
		struct urel_msg_status st;

		URT_CHECK_EQ(urel_msg_probe(j->m, j->peer[0], 0x702, 0, &st), 0);
		URT_CHECK_EQ(st.data, data[2]);
		for (int k = 0; k < 4; k++) {
			uint8_t *buf = xmalloc(lens[k]);

			memset(&st, 0xa5, sizeof(st));
			URT_CHECK_EQ(
				urel_msg_recv(j->m, j->peer[0], buf, lens[k], 0x700 + k, 0, &st),
				0);
			URT_CHECK_EQ(st.data, data[k]);
			URT_CHECK_EQ(st.len, lens[k]);
			free(buf);
		}
	}
}

/*
 * urel_msg_inject_data(): each message's bytes have left the buffer when it
 * returns 0 (the sender overwrites it at once), -EAGAIN (the ring full once
 * the receiver stops taking, or sends queued ahead) sends nothing, so the
 * fallback isend keeps the order; sizes up to the eager limit, with data.
 */
#define INJECTS 3000
static void t_inject(struct urt_job *j)
{
	struct urel_msg_attr attr;

	URT_CHECK_EQ(urel_msg_query(j->m, &attr), 0);
	if (j->rank == 0) {
		struct urel_msg_req **r = calloc(INJECTS, sizeof(*r));
		uint8_t **copies = calloc(INJECTS, sizeof(*copies));
		uint8_t *buf = xmalloc(attr.eager_max + 1);
		unsigned int injected = 0, fallbacks = 0;

		if (!r || !copies)
			exit(3);
		URT_CHECK_EQ(urel_msg_inject_data(NULL, j->peer[1], buf, 1, 0, 0), -EINVAL);
		URT_CHECK_EQ(urel_msg_inject_data(j->m, UREL_MSG_ANY_PEER, buf, 1, 0, 0), -EINVAL);
		URT_CHECK_EQ(urel_msg_inject_data(j->m, j->peer[1], NULL, 1, 0, 0), -EINVAL);
		URT_CHECK_EQ(urel_msg_inject_data(j->m, UREL_MSG_SELF, buf, 1, 0, 0), -EAGAIN);
		URT_CHECK_EQ(urel_msg_inject_data(j->m, j->peer[1], buf, attr.eager_max + 1, 0, 0),
			     -EAGAIN);
		for (unsigned int i = 0; i < INJECTS; i++) {
			size_t len = i % 7 == 3 ? attr.eager_max : i % 29;
			int ret;

			urt_fill(buf, i, (uint32_t)len);
			ret = urel_msg_inject_data(j->m, j->peer[1], buf, len, 0x900, i);
			if (ret == -EAGAIN) {
				/* Sent behind the queued ones from a copy it keeps until done. */
				copies[fallbacks] = xmalloc(len);
				memcpy(copies[fallbacks], buf, len);
				URT_CHECK_EQ(urel_msg_isend_data(j->m, j->peer[1],
								 copies[fallbacks], len, 0x900, i,
								 0, &r[fallbacks]),
					     0);
				fallbacks++;
			} else {
				URT_CHECK_EQ(ret, 0);
				injected++;
			}
			/* Sent or copied: the buffer is the caller's again. */
			memset(buf, 0xee, len);
		}
		fprintf(stderr, "rank 0: inject: %u posted at once, %u fell back\n", injected,
			fallbacks);
		URT_CHECK(injected > 0);
		for (unsigned int k = 0; k < fallbacks; k++) {
			URT_CHECK_EQ(urel_msg_wait(r[k], NULL), 0);
			free(copies[k]);
		}
		free(copies);
		free(r);
		free(buf);
	} else {
		uint8_t *buf = xmalloc(attr.eager_max);
		struct urel_msg_status st;

		/* Late, and not progressing meanwhile: the sender's ring fills. */
		usleep(300000);
		for (unsigned int i = 0; i < INJECTS; i++) {
			size_t len = i % 7 == 3 ? attr.eager_max : i % 29;

			URT_CHECK_EQ(
				urel_msg_recv(j->m, j->peer[0], buf, attr.eager_max, 0x900, 0, &st),
				0);
			URT_CHECK_EQ(st.data, i);
			URT_CHECK_EQ(st.len, len);
			if (urt_verify(buf, i, (uint32_t)len)) {
				fprintf(stderr,
					"rank 1: injected message %u corrupt or out of order\n", i);
				urt_failures++;
			}
		}
		free(buf);
	}
}

/*
 * Requests left at close: done but never tested (eager and rendezvous), a
 * synchronous send never matched, a receive never matched.
 * urel_msg_close() frees them all: LeakSanitizer (the test is built with
 * ASan) fails the rank's exit otherwise.
 */
static void t_leftovers(struct urt_job *j)
{
	static char big[200000], big_in[200000];
	struct urel_msg_req *r;
	char b[8];

	if (j->rank == 0) {
		URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[1], "done", 4, 0xb00, 0, &r), 0);
		/* Its FIN means rank 1 read it all: a receive done, never tested. */
		URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[1], big, sizeof(big), 0xb01, 0, &r), 0);
		URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
		URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[1], "sync", 4, 0xb02, UREL_MSG_SYNC, &r),
			     0);
		URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[1], "late", 4, 0xb04, 0, &r), 0);
	} else {
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b, sizeof(b), 0xb00, 0, &r), 0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], big_in, sizeof(big_in), 0xb01, 0, &r),
			     0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b, sizeof(b), 0xb03, 0, &r), 0);
	}
}

/*
 * Sends to ourselves (UREL_MSG_SELF), each rank on its own while the other
 * does the same: a small standard send completes at once and is received
 * later; a large one waits for its receive, then both hold the bytes; a
 * posted receive takes a send at once; a synchronous send completes only
 * when a matched probe claims it, and the buffer may change right after;
 * ANY_PEER receives take them too, in send order.
 */
static void t_self(struct urt_job *j)
{
	static char big[100000], big_in[100000];
	const size_t blen = sizeof(big);
	struct urel_msg_handle *h;
	struct urel_msg_status st;
	struct urel_msg_req *r, *s;
	char b[16];

	for (size_t i = 0; i < blen; i++)
		big[i] = (char)(i * 11 + j->rank);
	/* Small, standard: buffered, done before any receive. */
	URT_CHECK_EQ(urel_msg_isend(j->m, UREL_MSG_SELF, "hello", 5, 0x900, 0, &s), 0);
	URT_CHECK_EQ(urel_msg_test(s, NULL), 1);
	URT_CHECK_EQ(urel_msg_recv(j->m, UREL_MSG_SELF, b, sizeof(b), 0x900, 0, &st), 0);
	URT_CHECK(st.peer == UREL_MSG_SELF && st.len == 5 && !memcmp(b, "hello", 5));
	/* Large: the send waits for its receive. */
	URT_CHECK_EQ(urel_msg_isend(j->m, UREL_MSG_SELF, big, blen, 0x901, 0, &s), 0);
	URT_CHECK_EQ(urel_msg_test(s, NULL), 0);
	memset(big_in, 0, blen);
	URT_CHECK_EQ(urel_msg_recv(j->m, UREL_MSG_ANY_PEER, big_in, blen, 0x901, 0, &st), 0);
	URT_CHECK(st.peer == UREL_MSG_SELF && st.received == blen);
	URT_CHECK(!memcmp(big, big_in, blen));
	URT_CHECK_EQ(urel_msg_wait(s, NULL), 0);
	/* Pre-posted receive: matched at the send. */
	memset(big_in, 0, blen);
	URT_CHECK_EQ(urel_msg_irecv(j->m, UREL_MSG_SELF, big_in, blen, 0x902, 0, &r), 0);
	URT_CHECK_EQ(urel_msg_send(j->m, UREL_MSG_SELF, big, blen, 0x902), 0);
	URT_CHECK_EQ(urel_msg_wait(r, &st), 0);
	URT_CHECK(!memcmp(big, big_in, blen));
	/* Synchronous: not done until claimed; the claim copies, so the buffer is free after. */
	memcpy(b, "sync!", 6);
	URT_CHECK_EQ(urel_msg_isend(j->m, UREL_MSG_SELF, b, 6, 0x903, UREL_MSG_SYNC, &s), 0);
	URT_CHECK_EQ(urel_msg_test(s, NULL), 0);
	URT_CHECK_EQ(urel_msg_iprobe(j->m, UREL_MSG_SELF, 0x903, 0, &st), 1);
	URT_CHECK_EQ(urel_msg_test(s, NULL), 0);
	URT_CHECK_EQ(urel_msg_improbe(j->m, UREL_MSG_SELF, 0x903, 0, &h, &st), 1);
	URT_CHECK_EQ(urel_msg_test(s, NULL), 1);
	memset(b, 'x', 6);
	URT_CHECK_EQ(urel_msg_mrecv(h, big_in, 16, &st), 0);
	URT_CHECK(st.len == 6 && !memcmp(big_in, "sync!", 6));
	/* Order: three sends of mixed sizes, one wildcard receive after another. */
	URT_CHECK_EQ(urel_msg_isend(j->m, UREL_MSG_SELF, big, blen, 0x904, 0, &s), 0);
	URT_CHECK_EQ(urel_msg_send(j->m, UREL_MSG_SELF, "two", 3, 0x904), 0);
	URT_CHECK_EQ(urel_msg_recv(j->m, UREL_MSG_ANY_PEER, big_in, blen, 0x904, 0, &st), 0);
	URT_CHECK_EQ(st.len, blen);
	URT_CHECK_EQ(urel_msg_wait(s, NULL), 0);
	URT_CHECK_EQ(urel_msg_recv(j->m, UREL_MSG_ANY_PEER, big_in, blen, 0x904, 0, &st), 0);
	URT_CHECK(st.len == 3 && !memcmp(big_in, "two", 3));
}

/* Rank 0 tells rank 1 its sends completed through this pipe, not through the library. */
static int done_pipe[2];

/*
 * The receiver computes (never calls the library) while a rendezvous send
 * and a synchronous send to it complete: only its progress thread can
 * read the message and answer. Without the thread the sender waits until
 * the receiver gives up computing after 60 s, and the check fails.
 */
static void t_progress_thread(struct urt_job *j)
{
	static char big[300000], big_in[300000];
	struct urel_msg_req *r[2];
	struct urel_msg_attr a;
	struct pollfd pfd = { .fd = done_pipe[0], .events = POLLIN };
	char b[8], c = 'd';
	time_t give_up;

	URT_CHECK_EQ(urel_msg_query(j->m, &a), 0);
	URT_CHECK_EQ(a.progress_thread, 1);
	if (j->rank == 0) {
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = (char)(i * 7 + 3);
		urt_job_barrier(j);
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], big, sizeof(big), 0x800), 0);
		URT_CHECK_EQ(urel_msg_ssend(j->m, j->peer[1], "sync", 4, 0x801), 0);
		URT_CHECK_EQ(write(done_pipe[1], &c, 1), 1);
	} else {
		URT_CHECK_EQ(
			urel_msg_irecv(j->m, j->peer[0], big_in, sizeof(big_in), 0x800, 0, &r[0]),
			0);
		URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], b, sizeof(b), 0x801, 0, &r[1]), 0);
		urt_job_barrier(j);
		/* Compute: no library call until the sender says it is done (or 60 s pass). */
		give_up = time(NULL) + 60;
		while (poll(&pfd, 1, 0) == 0 && time(NULL) < give_up)
			;
		URT_CHECK_EQ(poll(&pfd, 1, 0), 1);
		URT_CHECK_EQ(urel_msg_waitall(2, r, NULL), 0);
		for (size_t i = 0; i < sizeof(big_in); i++) {
			if (big_in[i] != (char)(i * 7 + 3)) {
				URT_CHECK(!"rendezvous bytes differ");
				break;
			}
		}
		URT_CHECK(!memcmp(b, "sync", 4));
	}
}

/*
 * Both ranks run a progress thread, which sleeps on the device beside a
 * blocking receive: when the thread dispatches the message, it must wake
 * the receive, which otherwise sleeps out its timeout (50 ms). Rank 1
 * answers each ping 2 ms late, so that rank 0's receive has stopped
 * spinning and sleeps. Every sleep that timed out on a request already
 * done is counted (late_wakeups) and must stay 0.
 */
static void t_wakeups(struct urt_job *j)
{
	struct urel_msg_stats st0, st;
	int other = !j->rank;
	char b[8];

	URT_CHECK_EQ(urel_msg_stats(j->m, &st0), 0);
	for (int i = 0; i < 100; i++) {
		if (j->rank == 0)
			URT_CHECK_EQ(urel_msg_send(j->m, j->peer[other], "ping", 4, 0x900), 0);
		URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[other], b, sizeof(b), 0x900, 0, NULL), 0);
		if (j->rank == 1) {
			usleep(2000);
			URT_CHECK_EQ(urel_msg_send(j->m, j->peer[other], "pong", 4, 0x900), 0);
		}
	}
	URT_CHECK_EQ(urel_msg_stats(j->m, &st), 0);
	if (st.late_wakeups != st0.late_wakeups)
		fprintf(stderr, "rank %d: %llu sleeps ran to their timeout past their message\n",
			j->rank, (unsigned long long)(st.late_wakeups - st0.late_wakeups));
	URT_CHECK_EQ(st.late_wakeups, st0.late_wakeups);
}

/* With a progress thread: it serves a computing receiver, and it wakes blocking calls. */
static void t_thread(struct urt_job *j)
{
	t_progress_thread(j);
	urt_job_barrier(j);
	t_wakeups(j);
}

static void t_two_ranks(struct urt_job *j)
{
	static const struct {
		const char *name;
		void (*fn)(struct urt_job *j);
	} parts[] = { { "order", t_order },
		      { "wildcards", t_wildcards },
		      { "ssend", t_ssend },
		      { "cancel", t_cancel },
		      { "truncation", t_truncation },
		      { "probe", t_probe_waitany },
		      { "data", t_data },
		      { "inject", t_inject },
		      { "self", t_self },
		      { "leftovers", t_leftovers } };

	for (unsigned int i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		/* Where a hang happened, for the log. */
		fprintf(stderr, "rank %d: %s\n", j->rank, parts[i].name);
		parts[i].fn(j);
		urt_job_barrier(j);
	}
}

/* Every rank sends every size to every other; receives take ANY_PEER, half posted late. */
static void t_alltoall(struct urt_job *j)
{
	unsigned int n = COUNT, total = n * (unsigned int)(j->size - 1);
	struct urel_msg_req **sreq = calloc(total, sizeof(*sreq));
	struct urel_msg_req **rreq = calloc(total, sizeof(*rreq));
	uint8_t **sbuf = calloc(total, sizeof(*sbuf)), **rbuf = calloc(total, sizeof(*rbuf));
	uint64_t next[URT_JOB_MAX] = { 0 };
	struct urel_msg_status *st = calloc(total, sizeof(*st));
	unsigned int *done_at = calloc(total, sizeof(*done_at));
	unsigned int k = 0, idx;

	for (unsigned int i = 0; i < total / 2; i++) {
		rbuf[i] = xmalloc(MAXSZ);
		URT_CHECK_EQ(
			urel_msg_irecv(j->m, UREL_MSG_ANY_PEER, rbuf[i], MAXSZ, 7, 0, &rreq[i]), 0);
	}
	urt_job_barrier(j);
	for (unsigned int i = 0; i < n; i++) {
		for (int to = 0; to < j->size; to++) {
			if (to == j->rank)
				continue;
			sbuf[k] = xmalloc(size_of(i));
			fill(sbuf[k], j->rank, i);
			URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[to], sbuf[k], size_of(i), 7, 0,
						    &sreq[k]),
				     0);
			k++;
		}
	}
	for (unsigned int i = total / 2; i < total; i++) {
		rbuf[i] = xmalloc(MAXSZ);
		URT_CHECK_EQ(
			urel_msg_irecv(j->m, UREL_MSG_ANY_PEER, rbuf[i], MAXSZ, 7, 0, &rreq[i]), 0);
	}
	/* The first half completes in any order (rendezvous ones last)... */
	for (unsigned int c = 0; c < total / 2; c++) {
		URT_CHECK_EQ(urel_msg_waitany(total / 2, rreq, &idx, &st[c]), 0);
		done_at[idx] = c;
	}
	URT_CHECK_EQ(urel_msg_waitall(total - total / 2, rreq + total / 2, st + total / 2), 0);
	for (unsigned int i = total / 2; i < total; i++)
		done_at[i] = i;
	/* ...but receives match in posting order, and each sender's messages in its order. */
	for (unsigned int i = 0; i < total; i++) {
		const struct urel_msg_status *s = &st[done_at[i]];
		int from = urt_job_rank_of(j, s->peer);

		URT_CHECK(from >= 0);
		if (from < 0)
			break;
		check_msg(j, s, rbuf[i], from, next[from], 7);
		next[from]++;
	}
	URT_CHECK_EQ(urel_msg_waitall(total, sreq, NULL), 0);
	for (int r = 0; r < j->size; r++)
		URT_CHECK_EQ(next[r], r == j->rank ? 0 : n);
	for (unsigned int i = 0; i < total; i++) {
		free(sbuf[i]);
		free(rbuf[i]);
	}
	free(st);
	free(done_at);
	free(sreq);
	free(rreq);
	free(sbuf);
	free(rbuf);
}

#define BIG (64u << 20)

/* The piecewise counters of @m: windows of at most a quarter of the 8 MiB limit. */
static void check_windows(struct urel_msg *m, uint64_t bytes, uint64_t waits_min)
{
	struct urel_msg_rndv_stats rs;

	URT_CHECK_EQ(urel_msg_rndv_stats(m, &rs), 0);
	URT_CHECK_EQ(rs.window_bytes, bytes);
	URT_CHECK(rs.windows >= bytes / (2u << 20));
	URT_CHECK(rs.pin_waits >= waits_min);
	URT_CHECK_EQ(rs.failures, 0);
	/* Every window of a finished send is released. */
	URT_CHECK_EQ(rs.pinned_bytes, 0);
	URT_CHECK(rs.pinned_peak > 0 && rs.pinned_peak <= (8u << 20));
}

static void t_big(struct urt_job *j)
{
	uint8_t *buf = xmalloc(BIG);
	struct urel_msg_status st;
	long long t0;

	if (j->rank == 0) {
		urt_fill(buf, 64, BIG);
		t0 = urt_now_ms();
		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], buf, BIG, 0x64), 0);
		printf("vm_msg_tagged: 64 MiB rendezvous in %lld ms\n", urt_now_ms() - t0);
		check_windows(j->m, BIG, 0);
	} else {
		memset(buf, 0, BIG);
		URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], buf, BIG, 0x64, 0, &st), 0);
		URT_CHECK_EQ(st.len, BIG);
		URT_CHECK_EQ(st.received, BIG);
		URT_CHECK_EQ(urt_verify(buf, 64, BIG), 0);
	}
	free(buf);
}

#define MANY 3
#define MANY_LEN (8u << 20)

/* Several large messages at once, received in the opposite order. */
static void t_big_many(struct urt_job *j)
{
	struct urel_msg_req *req[MANY];
	uint8_t *buf[MANY];

	for (int i = 0; i < MANY; i++) {
		buf[i] = xmalloc(MANY_LEN);
		if (j->rank == 0) {
			urt_fill(buf[i], 100 + (uint64_t)i, MANY_LEN);
			URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[1], buf[i], MANY_LEN, 0x70 + i, 0,
						    &req[i]),
				     0);
		} else {
			memset(buf[i], 0, MANY_LEN);
		}
	}
	if (j->rank == 1) {
		for (int i = MANY - 1; i >= 0; i--)
			URT_CHECK_EQ(urel_msg_irecv(j->m, j->peer[0], buf[i], MANY_LEN, 0x70 + i, 0,
						    &req[i]),
				     0);
	}
	URT_CHECK_EQ(urel_msg_waitall(MANY, req, NULL), 0);
	for (int i = 0; i < MANY; i++) {
		if (j->rank == 1)
			URT_CHECK_EQ(urt_verify(buf[i], 100 + (uint64_t)i, MANY_LEN), 0);
		free(buf[i]);
	}
}

/* Not even one window can be pinned: both sides fail, neither waits. */
static void t_big_refused(struct urt_job *j)
{
	uint8_t *buf = xmalloc(1u << 20);
	struct urel_msg_status st;

	memset(buf, 1, 1u << 20);
	if (j->rank == 0) {
		struct urel_msg_rndv_stats rs;

		URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], buf, 1u << 20, 0x99), -ENOMEM);
		URT_CHECK_EQ(urel_msg_rndv_stats(j->m, &rs), 0);
		URT_CHECK(rs.windows == 0 && rs.pin_waits == 0);
		URT_CHECK_EQ(rs.failures, 1);
	} else {
		URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], buf, 1u << 20, 0x99, 0, &st), -ENOMEM);
		URT_CHECK_EQ(st.len, 1u << 20);
	}
	/* The stream goes on: an eager message and a rendezvous one that fits whole. */
	for (size_t len = 100; len <= 20000; len += 19900) {
		if (j->rank == 0) {
			urt_fill(buf, len, (uint32_t)len);
			URT_CHECK_EQ(urel_msg_send(j->m, j->peer[1], buf, len, 0x9a), 0);
		} else {
			URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[0], buf, len, 0x9a, 0, &st), 0);
			URT_CHECK_EQ(st.received, len);
			URT_CHECK_EQ(urt_verify(buf, len, (uint32_t)len), 0);
		}
	}
	free(buf);
}

#define NCTX 4
#define CTX_LEN (4u << 20)

struct ctxs {
	struct urel_ep *ep[NCTX];
	struct urel_msg *m[NCTX];
	urel_peer_t to[NCTX]; /* the other rank's context of the same index */
};

/* NCTX more contexts, each on its own endpoint, joined to the other rank's. */
static void ctxs_open(struct urt_job *j, struct ctxs *c)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	uint16_t mine[NCTX], theirs[NCTX];
	struct urel_msg_req *s;
	int other = 1 - j->rank;

	for (int k = 0; k < NCTX; k++) {
		URT_CHECK_EQ(urel_ep_create(j->dev, (struct sockaddr *)&sin, sizeof(sin), NULL,
					    &c->ep[k]),
			     0);
		URT_CHECK_EQ(urel_msg_open(c->ep[k], NULL, &c->m[k]), 0);
		mine[k] = urt_ep_port(c->ep[k]);
	}
	URT_CHECK_EQ(urel_msg_isend(j->m, j->peer[other], mine, sizeof(mine), 0xc0, 0, &s), 0);
	URT_CHECK_EQ(urel_msg_recv(j->m, j->peer[other], theirs, sizeof(theirs), 0xc0, 0, NULL), 0);
	URT_CHECK_EQ(urel_msg_wait(s, NULL), 0);
	for (int k = 0; k < NCTX; k++) {
		struct sockaddr_in o = urt_sin("127.0.0.1", theirs[k]);

		URT_CHECK_EQ(urel_av_insert(c->ep[k], (struct sockaddr *)&o, sizeof(o), &c->to[k]),
			     0);
	}
}

static void ctxs_close(struct ctxs *c)
{
	for (int k = 0; k < NCTX; k++) {
		URT_CHECK_EQ(urel_msg_close(c->m[k]), 0);
		urel_ep_destroy(c->ep[k]);
	}
}

/* Progress every context in turn until each one's request completed. */
static void ctxs_wait(struct urel_msg_req **req, struct urel_msg_status *st)
{
	int left = 0;

	for (int k = 0; k < NCTX; k++)
		left += req[k] != NULL;
	while (left) {
		for (int k = 0; k < NCTX; k++) {
			int ret;

			if (!req[k])
				continue;
			ret = urel_msg_test(req[k], &st[k]);
			if (!ret)
				continue;
			URT_CHECK_EQ(ret, 1);
			URT_CHECK_EQ(st[k].error, 0);
			req[k] = NULL;
			left--;
		}
	}
}

static struct urel_msg_rndv_stats ctx_stat(struct urel_msg *m)
{
	struct urel_msg_rndv_stats rs = { 0 };

	URT_CHECK_EQ(urel_msg_rndv_stats(m, &rs), 0);
	return rs;
}

/*
 * One 4 MiB message per context, from rank 0's four contexts to rank 1's,
 * under an 8 MiB limit. Every request for windows reaches rank 0 before it
 * takes any; contexts 0 and 1 take theirs first (2 MiB, two each: the whole
 * limit), so context 2 finds the limit reached by other contexts' windows
 * and must wait, not fail; context 3 then blocks in urel_msg_wait() alone,
 * and only its wait's progress of contexts 0 and 1 can release their
 * windows (nothing else progresses them meanwhile).
 */
static void t_big_contexts(struct urt_job *j)
{
	struct urel_msg_status st[NCTX];
	struct urel_msg_req *req[NCTX];
	uint64_t windows = 0, bytes = 0, waits = 0;
	uint8_t *buf[NCTX];
	struct ctxs c;

	ctxs_open(j, &c);
	for (int k = 0; k < NCTX; k++) {
		/* Page-aligned: a 2 MiB window pins 512 pages, not 513. */
		buf[k] = aligned_alloc(4096, CTX_LEN);
		URT_CHECK(buf[k] != NULL);
		if (!buf[k])
			exit(1);
		if (j->rank == 0) {
			urt_fill(buf[k], 200 + (uint64_t)k, CTX_LEN);
			URT_CHECK_EQ(
				urel_msg_isend(c.m[k], c.to[k], buf[k], CTX_LEN, 0xd0, 0, &req[k]),
				0);
		} else {
			memset(buf[k], 0, CTX_LEN);
		}
	}
	if (j->rank == 1) {
		/* Every request-to-send arrived: match each, which asks for windows. */
		for (int k = 0; k < NCTX; k++) {
			while (urel_msg_iprobe(c.m[k], c.to[k], 0xd0, 0, &st[k]) == 0)
				;
			URT_CHECK_EQ(
				urel_msg_irecv(c.m[k], c.to[k], buf[k], CTX_LEN, 0xd0, 0, &req[k]),
				0);
		}
	}
	urt_job_barrier(j);
	if (j->rank == 0) {
		usleep(200 * 1000); /* the requests for windows land on every endpoint */
		for (int k = 0; k < 2; k++) {
			while (ctx_stat(c.m[k]).windows < 2)
				URT_CHECK(urel_msg_progress(c.m[k]) >= 0);
		}
		/* Context 2 takes its request for windows: it must wait, not fail. */
		while (!ctx_stat(c.m[2]).pin_waits && !ctx_stat(c.m[2]).failures)
			URT_CHECK(urel_msg_progress(c.m[2]) >= 0);
		URT_CHECK_EQ(ctx_stat(c.m[2]).failures, 0);
		URT_CHECK_EQ(urel_msg_wait(req[3], &st[3]), 0);
		URT_CHECK(ctx_stat(c.m[3]).pin_waits >= 1);
		req[3] = NULL;
	}
	ctxs_wait(req, st);
	for (int k = 0; k < NCTX; k++) {
		struct urel_msg_rndv_stats rs;

		if (j->rank == 1) {
			URT_CHECK_EQ(st[k].received, CTX_LEN);
			URT_CHECK_EQ(urt_verify(buf[k], 200 + (uint64_t)k, CTX_LEN), 0);
		}
		URT_CHECK_EQ(urel_msg_rndv_stats(c.m[k], &rs), 0);
		windows += rs.windows;
		bytes += rs.window_bytes;
		waits += rs.pin_waits;
		free(buf[k]);
	}
	if (j->rank == 0) {
		printf("vm_msg_tagged: %d contexts, %d x 4 MiB: %llu windows, %llu waits\n", NCTX,
		       NCTX, (unsigned long long)windows, (unsigned long long)waits);
		URT_CHECK_EQ(bytes, (uint64_t)NCTX * CTX_LEN);
		for (int k = 0; k < NCTX; k++)
			check_windows(c.m[k], CTX_LEN, 0);
		/* Two contexts' windows fill the limit: the other two waited. */
		URT_CHECK(waits >= 2);
	} else {
		/* The receiver registers nothing. */
		URT_CHECK_EQ(windows, 0);
	}
	ctxs_close(&c);
}

/* Drop root for nobody with @memlock bytes lockable; the device opened to all first. */
static void run_unprivileged(rlim_t memlock)
{
	struct rlimit rl = { .rlim_cur = memlock, .rlim_max = memlock };

	URT_CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	URT_CHECK_EQ(setgid(65534), 0);
	URT_CHECK_EQ(setuid(65534), 0);
	/* The sanitizer's leak check at exit needs to trace its own threads. */
	URT_CHECK_EQ(prctl(PR_SET_DUMPABLE, 1), 0);
}

static int check_pinned(void)
{
	int ret = 0;
	pid_t pid;

	URT_CHECK_EQ(chmod("/dev/usnic_rel", 0666), 0);
	/* A child per limit: privileges once dropped do not come back. */
	for (int k = 0; k < 2; k++) {
		int status;

		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			int r = 0;

			run_unprivileged(k ? 32u << 10 : 8u << 20);
			if (k) {
				r |= urt_job_run(2, NULL, t_big_refused, 120);
			} else {
				r |= urt_job_run(2, NULL, t_big, 300);
				r |= urt_job_run(2, NULL, t_big_many, 300);
				r |= urt_job_run(2, NULL, t_big_contexts, 300);
			}
			_exit(r || urt_failures ? 1 : 0);
		}
		URT_CHECK(pid > 0);
		URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			ret = -1;
	}
	chmod("/dev/usnic_rel", 0600);
	return ret;
}

/*
 * One process, two contexts on two endpoints of two devices: waitany over
 * a receive of each finds the one whose message came (in the context it
 * did not sleep on first), a rendezvous message so both must progress.
 */
static void check_waitany_contexts(void)
{
	static char big[100000], big_in[100000];
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_device *dev[2];
	struct urel_msg_req *r[2], *s;
	struct urel_msg_status st;
	struct urel_msg *m[2];
	struct urel_ep *ep[2];
	urel_peer_t to[2];
	unsigned int idx = 9;
	char b[4];

	for (int i = 0; i < 2; i++) {
		URT_CHECK_EQ(urel_device_open(NULL, &dev[i]), 0);
		URT_CHECK_EQ(
			urel_ep_create(dev[i], (struct sockaddr *)&sin, sizeof(sin), NULL, &ep[i]),
			0);
		URT_CHECK_EQ(urel_msg_open(ep[i], NULL, &m[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		struct sockaddr_in o = urt_sin("127.0.0.1", urt_ep_port(ep[1 - i]));

		URT_CHECK_EQ(urel_av_insert(ep[i], (struct sockaddr *)&o, sizeof(o), &to[i]), 0);
	}
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 5 + 1);
	URT_CHECK_EQ(urel_msg_irecv(m[0], to[0], b, sizeof(b), 0xa00, 0, &r[0]), 0);
	URT_CHECK_EQ(urel_msg_irecv(m[1], to[1], big_in, sizeof(big_in), 0xa01, 0, &r[1]), 0);
	URT_CHECK_EQ(urel_msg_isend(m[0], to[0], big, sizeof(big), 0xa01, 0, &s), 0);
	URT_CHECK_EQ(urel_msg_waitany(2, r, &idx, &st), 0);
	URT_CHECK_EQ(idx, 1);
	URT_CHECK(r[1] == NULL && st.received == sizeof(big));
	URT_CHECK(!memcmp(big, big_in, sizeof(big)));
	URT_CHECK_EQ(urel_msg_wait(s, NULL), 0);
	URT_CHECK_EQ(urel_msg_cancel(r[0]), 0);
	URT_CHECK_EQ(urel_msg_waitany(2, r, &idx, NULL), -ECANCELED);
	URT_CHECK_EQ(idx, 0);
	for (int i = 0; i < 2; i++) {
		URT_CHECK_EQ(urel_msg_close(m[i]), 0);
		urel_ep_destroy(ep[i]);
		urel_device_close(dev[i]);
	}
}

/*
 * In a child: a tiny send to ourselves, waited for (reaped), then cancelled
 * (a use of the request after its reap). @cache sets UREL_MSG_REQ_CACHE.
 * Returns the child's exit status and, in @err, what it printed on stderr.
 */
static int reap_misuse(const char *cache, char *err, size_t cap)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	int fds[2], status = -1;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	URT_CHECK_EQ(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct urel_device *dev;
		struct urel_msg_req *s;
		struct urel_msg *m;
		struct urel_ep *ep;

		dup2(fds[1], 2);
		close(fds[0]);
		setenv("UREL_MSG_REQ_CACHE", cache, 1);
		if (urel_device_open(NULL, &dev) ||
		    urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep) ||
		    urel_msg_open(ep, NULL, &m) ||
		    urel_msg_isend(m, UREL_MSG_SELF, "x", 1, 0xb00, 0, &s) ||
		    urel_msg_wait(s, NULL))
			_exit(3);
		/* A send cannot be cancelled: -EINVAL, read from freed memory. */
		fprintf(stderr, "cancel after reap: %d\n", urel_msg_cancel(s));
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < cap && (n = read(fds[0], err + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	err[got] = 0;
	close(fds[0]);
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

static void check_reap_caught(void)
{
	static char err[65536];
	int status;

	status = reap_misuse("0", err, sizeof(err));
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3);
	URT_CHECK(strstr(err, "heap-use-after-free") != NULL);
	/* The sanitizer build's default is no cache: the same without the variable. */
	status = reap_misuse("", err, sizeof(err));
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3);
	URT_CHECK(strstr(err, "heap-use-after-free") != NULL);
	/* Reused requests hide it: why the sanitizer build keeps none. */
	status = reap_misuse("32", err, sizeof(err));
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	URT_CHECK(strstr(err, "cancel after reap: -22") && !strstr(err, "AddressSanitizer"));
}

/*
 * UREL_EP_SERIAL: unknown creation flags are refused and leave no endpoint;
 * a tagged context with a progress thread is refused on a serial endpoint
 * (the thread would call on it beside its caller), one without is opened.
 */
static void check_serial_refusals(void)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_msg_attr thr = { .progress_thread = 1 }, none = { .progress_thread = 2 };
	struct urel_device *dev;
	struct urel_ep *ep = (struct urel_ep *)&sin;
	struct urel_msg *m = NULL;

	URT_CHECK_EQ(urel_device_open(NULL, &dev), 0);
	URT_CHECK_EQ(urel_ep_create_flags(dev, (struct sockaddr *)&sin, sizeof(sin), NULL,
					  UREL_EP_SERIAL << 1, &ep),
		     -EINVAL);
	URT_CHECK(ep == NULL);
	URT_CHECK_EQ(
		urel_ep_create_flags(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, ~0u, &ep),
		-EINVAL);
	URT_CHECK_EQ(urel_ep_create_flags(NULL, (struct sockaddr *)&sin, sizeof(sin), NULL,
					  UREL_EP_SERIAL, &ep),
		     -EINVAL);
	URT_CHECK_EQ(urel_ep_create_flags(dev, (struct sockaddr *)&sin, sizeof(sin), NULL,
					  UREL_EP_SERIAL, &ep),
		     0);
	URT_CHECK_EQ(urel_msg_open(ep, &thr, &m), -EINVAL);
	URT_CHECK_EQ(urel_msg_open(ep, &none, &m), 0);
	URT_CHECK_EQ(urel_msg_close(m), 0);
	URT_CHECK_EQ(urel_ep_destroy(ep), 0);
	urel_device_close(dev);
}

static void check_attr(void)
{
	struct urel_msg_attr a = { .tiny_max = 100, .eager_max = 50 }, got;
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);
	struct urel_device *dev;
	struct urel_msg *m;
	struct urel_ep *ep;

	URT_CHECK_EQ(urel_device_open(NULL, &dev), 0);
	URT_CHECK_EQ(urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep), 0);
	/* Tiny above eager, eager above the data channel: refused. */
	URT_CHECK_EQ(urel_msg_open(ep, &a, &m), -EINVAL);
	a = (struct urel_msg_attr){ .eager_max = 1U << 30 };
	URT_CHECK_EQ(urel_msg_open(ep, &a, &m), -EINVAL);
	setenv("UREL_MSG_EAGER_MAX", "junk", 1);
	URT_CHECK_EQ(urel_msg_open(ep, NULL, &m), -EINVAL);
	/* A window smaller than a page cannot be registered. */
	setenv("UREL_MSG_EAGER_MAX", "4096", 1);
	setenv("UREL_MSG_RNDV_WINDOW", "100", 1);
	URT_CHECK_EQ(urel_msg_open(ep, NULL, &m), -EINVAL);
	unsetenv("UREL_MSG_RNDV_WINDOW");
	setenv("UREL_MSG_EAGER_MAX", "4096", 1);
	a = (struct urel_msg_attr){ .tiny_max = 64 };
	URT_CHECK_EQ(urel_msg_open(ep, &a, &m), 0);
	URT_CHECK_EQ(urel_msg_query(m, &got), 0);
	URT_CHECK_EQ(got.tiny_max, 64);
	URT_CHECK_EQ(got.eager_max, 4096);
	URT_CHECK(got.rndv_chunk > 0 && got.spin > 0);
	URT_CHECK_EQ(urel_msg_close(m), 0);
	unsetenv("UREL_MSG_EAGER_MAX");
	urel_ep_destroy(ep);
	urel_device_close(dev);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	int all = !strcmp(what, "all"), ret = 0;
	/* Small limits too: every protocol boundary moves, the same checks hold. */
	struct urel_msg_attr small = { .tiny_max = 8, .eager_max = 300, .rndv_chunk = 4096 };

	if (!strcmp(what, "quick")) {
		nsizes = NSIZES - 1;
		reps = 1;
	}
	if (all || !strcmp(what, "quick") || !strcmp(what, "attr")) {
		check_attr();
		check_waitany_contexts();
		check_reap_caught();
	}
	if (all || !strcmp(what, "quick") || !strcmp(what, "two")) {
		ret |= urt_job_run(2, NULL, t_two_ranks, 500);
		/*
		 * And every rendezvous registered piecewise, in windows of two
		 * pages; with the request cache of non-sanitized builds, which
		 * this build does not use by default.
		 */
		setenv("UREL_MSG_RNDV_WINDOW", "8192", 1);
		setenv("UREL_MSG_REQ_CACHE", "32", 1);
		ret |= urt_job_run(2, &small, t_two_ranks, 500);
		unsetenv("UREL_MSG_REQ_CACHE");
		unsetenv("UREL_MSG_RNDV_WINDOW");
	}
	if (all || !strcmp(what, "quick") || !strcmp(what, "thread")) {
		struct urel_msg_attr thr = { .progress_thread = 1 };

		URT_CHECK_EQ(pipe(done_pipe), 0);
		ret |= urt_job_run(2, &thr, t_thread, 300);
		close(done_pipe[0]);
		close(done_pipe[1]);
	}
	/*
	 * Every rank's endpoint UREL_EP_SERIAL (each rank one thread): the
	 * library takes none of its locks; the same checks, every protocol,
	 * with the default and the small limits.
	 */
	if (all || !strcmp(what, "serial")) {
		check_serial_refusals();
		urt_job_ep_flags = UREL_EP_SERIAL;
		ret |= urt_job_run(2, NULL, t_two_ranks, 500);
		ret |= urt_job_run(2, &small, t_two_ranks, 500);
		urt_job_ep_flags = 0;
	}
	if (all || !strcmp(what, "quick") || !strcmp(what, "alltoall"))
		ret |= urt_job_run(4, NULL, t_alltoall, 500);
	if (!strcmp(what, "big"))
		ret |= check_pinned();
	if (ret)
		urt_failures++;
	return urt_done("vm_msg_tagged");
}
