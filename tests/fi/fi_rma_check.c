// SPDX-License-Identifier: MIT
/*
 * fi_rma_check: RMA and atomics of the urel libfabric provider between two
 * processes. The server registers a window and serves; the client reads,
 * writes and runs atomics on it through libfabric only, keeps a model of
 * every byte, and checks each read, fetched value and completion against
 * it; at the end it sends the model and the server compares its own memory
 * byte for byte. Refusals (a wrong key, a range outside the registration)
 * must come back as error completions on fi_cq_readerr.
 * Writes with remote CQ data (fi_writedata, fi_inject_writedata,
 * fi_writemsg) must each give the target one completion with the data, in
 * order, and only once the written bytes are there (checked when the target
 * reads it); a refused one none. Messages of several iovs (fi_sendv,
 * fi_sendmsg, fi_tsendv, fi_tsendmsg into fi_recvv, fi_recvmsg, fi_trecvv,
 * fi_trecvmsg) are checked byte for byte, one too long for its iovs must
 * fail with FI_ETRUNC; reads and writes of several local and remote iovs
 * against the model.
 *
 *   fi_rma_check -s ADDR PORT PEER PEERPORT   server at ADDR:PORT
 *   fi_rma_check -c ADDR PORT PEER PEERPORT   client at ADDR:PORT
 *   fi_rma_check -l ADDR PORT                 both in one process, on its own window
 * Both bind their own address and know the other's from the command line
 * (the module answers only peers in the endpoint's address vector). The
 * server registers its window before it opens its endpoint (LATE_MR set in
 * the environment: after). WD_ONLY=N in both: only the writes with CQ data, N
 * passes, then a message saying they are done (for a run over a lossy link, where a
 * notice that could overtake its write would).
 * Exit status 0 when every check passed.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fi_check.h"

/* Bytes of the window: several library pieces, and not a multiple of a page. */
#define WIN (3u * 1024 * 1024 + 4099)
/* Where the atomic words live (8-aligned), away from the written ranges. */
#define AT_OFF (WIN - 4099 - 1024)
/* The iovs a hint asks for, and the provider's limit. */
#define IOVS 4
#define IOV_MAX_URL 8

/*
 * The writes with CQ data, in the order issued: up to two remote ranges
 * each, in a part of the window nothing else writes (so the target can
 * check the bytes whenever it reads the completion).
 */
#define WD_DATA(k) (0xda7a000000000000ULL | ((uint64_t)(k) << 8) | 0x5c)
static const struct wd {
	size_t off[2], len[2];
} wds[] = {
	{ { 2200000 }, { 1000 } },
	{ { 2201000 }, { 300000 } }, /* several pieces */
	{ { 2501000 }, { 100 } }, /* injected */
	{ { 2502000, 2600001 }, { 5000, 20001 } }, /* fi_writemsg, 3 local iovs */
	{ { 0 }, { 0 } }, /* nothing written, data only */
	{ { 2700000 }, { 7 } }, /* after two refused ones */
};
#define WD_COUNT (sizeof(wds) / sizeof(wds[0]))

/* Where range @r of write @g lands: each pass lower down, so a target that reads late still checks
 * its own bytes. */
static size_t wd_off(size_t g, int r)
{
	const struct wd *w = &wds[g % WD_COUNT];

	return w->len[r] ? w->off[r] - g / WD_COUNT * 700000 : 0;
}

static unsigned char wd_pat(size_t k, size_t j)
{
	return (unsigned char)(k * 31 + j * 29 + (j >> 7) + 1);
}

/*
 * The target's window (server, or the process itself), and the next write it
 * expects; writes are numbered across passes (WD_ONLY: several), the data and
 * bytes of each its own.
 */
static unsigned char *target_win;
static size_t wd_next, wd_passes = 1;

static int fails;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fails++;                                                                   \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

/* The server's key message, and its verdict. */
struct reply {
	uint64_t key;
	uint64_t len;
	int status;
};

/* The last successful completion wait_for() took. */
static struct fi_cq_data_entry last;

/*
 * A target's completion of a write with CQ data: the next one issued, with
 * its data, and its bytes already in the window.
 */
static void remote_write(const struct fi_cq_data_entry *c)
{
	const struct wd *w = &wds[wd_next % WD_COUNT];
	size_t j = 0;

	CHECK(c->flags == (FI_REMOTE_CQ_DATA | FI_RMA | FI_REMOTE_WRITE), "remote flags %#" PRIx64,
	      (uint64_t)c->flags);
	CHECK(!c->op_context, "remote write with a context");
	if (wd_next >= WD_COUNT * wd_passes || c->data != WD_DATA(wd_next)) {
		CHECK(0, "remote write data %#" PRIx64 ", expected write %zu", (uint64_t)c->data,
		      wd_next);
		return;
	}
	CHECK(c->len == w->len[0] + w->len[1], "remote write %zu: len %zu", wd_next, c->len);
	for (int r = 0; r < 2; r++) {
		for (size_t i = 0; i < w->len[r]; i++, j++) {
			if (target_win[wd_off(wd_next, r) + i] != wd_pat(wd_next, j)) {
				CHECK(0, "write %zu reported before its byte %zu was there",
				      wd_next, j);
				r = 2;
				break;
			}
		}
	}
	wd_next++;
}

/*
 * Wait for the completion of the operation with context @ctx (operations
 * are issued one at a time). Returns 0 and the flags, or the error entry's
 * err (positive) with *@e filled.
 */
static int wait_for(void *ctx, uint64_t *flags, struct fi_cq_err_entry *e)
{
	double end = now() + 120;

	for (;;) {
		struct fi_cq_data_entry c;
		ssize_t n = fi_cq_read(cq, &c, 1);

		if (n == 1 && (c.flags & FI_REMOTE_WRITE)) {
			remote_write(&c);
			continue;
		}
		if (n == 1) {
			if (c.op_context != ctx)
				DIE("completion of %p while waiting for %p", c.op_context, ctx);
			if (flags)
				*flags = c.flags;
			last = c;
			return 0;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			if (fi_cq_readerr(cq, &err, 0) != 1)
				DIE("fi_cq_readerr after -FI_EAVAIL");
			if (err.op_context != ctx)
				DIE("error completion of %p while waiting for %p: %s",
				    err.op_context, ctx, fi_strerror(err.err));
			if (e)
				*e = err;
			else
				printf("error completion: %s (provider: %s)\n",
				       fi_strerror(err.err),
				       fi_cq_strerror(cq, err.prov_errno, NULL, NULL, 0));
			if (flags)
				*flags = err.flags;
			return err.err ? err.err : -1;
		}
		if (n != -FI_EAGAIN)
			DIE("fi_cq_read: %s", fi_strerror((int)-n));
		if (now() > end)
			DIE("no completion for %p in 120 s", ctx);
	}
}

/* Post with retries while the provider says -FI_EAGAIN (progressing meanwhile). */
#define POST(call)                                                                                 \
	do {                                                                                       \
		ssize_t r_;                                                                        \
		while ((r_ = (call)) == -FI_EAGAIN)                                                \
			fi_cq_read(cq, NULL, 0);                                                   \
		if (r_)                                                                            \
			DIE("%s: %s (%zd)", #call, fi_strerror((int)-r_), r_);                     \
	} while (0)

/* Up to the domain; then open_ep(). */
static void setup(const char *node, const char *port)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		DIE("fi_allocinfo");
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_REMOTE_CQ_DATA;
	hints->tx_attr->iov_limit = IOVS;
	hints->tx_attr->rma_iov_limit = IOVS;
	hints->rx_attr->iov_limit = IOVS;
	hints->ep_attr->type = FI_EP_RDM;
	/* What Open MPI's btl ofi offers: the provider must pick within it. */
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	hints->fabric_attr->prov_name = strdup("urel");
	ret = fi_getinfo(FI_VERSION(1, 17), node, port, FI_SOURCE, hints, &info);
	if (ret)
		DIE("fi_getinfo: %s", fi_strerror(-ret));
	fi_freeinfo(hints);
	CHECK((info->caps & (FI_RMA | FI_ATOMIC)) == (FI_RMA | FI_ATOMIC), "caps %#" PRIx64,
	      (uint64_t)info->caps);
	CHECK(info->tx_attr->iov_limit >= IOVS && info->tx_attr->rma_iov_limit >= IOVS &&
		      info->rx_attr->iov_limit >= IOVS,
	      "iov limits %zu %zu %zu", info->tx_attr->iov_limit, info->tx_attr->rma_iov_limit,
	      info->rx_attr->iov_limit);
	CHECK(info->domain_attr->cq_data_size >= 8, "cq_data_size %zu",
	      info->domain_attr->cq_data_size);
	CHECK(info->domain_attr->mr_mode == (FI_MR_ALLOCATED | FI_MR_PROV_KEY),
	      "mr_mode %#x: offsets and provider keys expected", info->domain_attr->mr_mode);
	TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
	TRY(fi_domain(fabric, info, &domain, NULL));
}

static unsigned char pat0(size_t i)
{
	return (unsigned char)(i * 7 + 3 + (i >> 9));
}

/* Take the targets' completions of writes with CQ data still queued, for up to 30 s. */
static void drain_remote(void)
{
	double end = now() + 30;

	while (wd_next < WD_COUNT * wd_passes && now() < end) {
		struct fi_cq_data_entry c;
		ssize_t n = fi_cq_read(cq, &c, 1);

		if (n == 1 && (c.flags & FI_REMOTE_WRITE))
			remote_write(&c);
		else if (n == 1)
			CHECK(0, "unexpected completion of %p", c.op_context);
		else if (n != -FI_EAGAIN)
			DIE("fi_cq_read: %s", fi_strerror((int)-n));
	}
	CHECK(wd_next == WD_COUNT * wd_passes, "%zu of %zu writes with data reported", wd_next,
	      WD_COUNT * wd_passes);
}

/* The messages of several iovs: the sender's and the receiver's cuts. */
static const struct msgspec {
	int tagged;
	uint64_t tag;
	int ns, nr;
	size_t s[4], r[4];
} msgs[] = {
	{ 0, 0, 4, 3, { 7, 9000, 1, 50992 }, { 10, 5000, 70000 } }, /* rendezvous */
	{ 1, 7, 3, 2, { 50, 100, 100 }, { 100, 200 } }, /* with CQ data */
	{ 0, 0, 2, 2, { 3, 5 }, { 4, 4 } },
	{ 1, 8, 2, 2, { 60, 40 }, { 32, 32 } }, /* 36 bytes too long */
	{ 1, 9, 1, 1, { 30 }, { 30 } },
};
#define MSG_COUNT (sizeof(msgs) / sizeof(msgs[0]))
#define MSG_DATA 0x1234abcd5678ef01ULL

static unsigned char msg_pat(size_t n, size_t j)
{
	return (unsigned char)(n * 17 + j * 11 + (j >> 8) + 5);
}

static size_t sum(const size_t *l, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += l[i];
	return t;
}

/* iovs over @buf, placed in memory in reverse order (a scatter in the wrong order shows). */
static void cut(unsigned char *buf, const size_t *l, int n, struct iovec *iov)
{
	size_t o = 0;

	for (int i = n - 1; i >= 0; i--) {
		iov[i].iov_base = buf + o;
		iov[i].iov_len = l[i];
		o += l[i];
	}
}

static void client_msgs(void)
{
	struct iovec iov[IOV_MAX_URL + 1];
	unsigned char big[IOV_MAX_URL + 1];
	int ctx;

	for (size_t n = 0; n < MSG_COUNT; n++) {
		const struct msgspec *m = &msgs[n];
		size_t len = sum(m->s, m->ns), j = 0;
		unsigned char *buf = malloc(len);

		if (!buf)
			DIE("out of memory");
		cut(buf, m->s, m->ns, iov);
		for (int i = 0; i < m->ns; i++)
			for (size_t b = 0; b < iov[i].iov_len; b++)
				((unsigned char *)iov[i].iov_base)[b] = msg_pat(n, j++);
		if (!m->tagged && n == 0) {
			POST(fi_sendv(ep, iov, NULL, (size_t)m->ns, peer, &ctx));
		} else if (!m->tagged) {
			struct fi_msg msg = { .msg_iov = iov,
					      .iov_count = (size_t)m->ns,
					      .addr = peer,
					      .context = &ctx };

			POST(fi_sendmsg(ep, &msg, FI_COMPLETION));
		} else if (n == 1) {
			struct fi_msg_tagged msg = { .msg_iov = iov,
						     .iov_count = (size_t)m->ns,
						     .addr = peer,
						     .tag = m->tag,
						     .context = &ctx,
						     .data = MSG_DATA };

			POST(fi_tsendmsg(ep, &msg, FI_COMPLETION | FI_REMOTE_CQ_DATA));
		} else {
			POST(fi_tsendv(ep, iov, NULL, (size_t)m->ns, peer, m->tag, &ctx));
		}
		CHECK(!wait_for(&ctx, NULL, NULL), "send of message %zu", n);
		free(buf);
	}
	/* More iovs than offered are refused at once. */
	for (int i = 0; i <= IOV_MAX_URL; i++)
		iov[i] = (struct iovec){ big + i, 1 };
	CHECK(fi_sendv(ep, iov, NULL, IOV_MAX_URL + 1, peer, &ctx) == -FI_EINVAL,
	      "a send of %d iovs accepted", IOV_MAX_URL + 1);
	printf("messages of several iovs sent\n");
}

static void server_msgs(void)
{
	struct fi_cq_err_entry e;
	struct iovec iov[4];
	int ctx;

	for (size_t n = 0; n < MSG_COUNT; n++) {
		const struct msgspec *m = &msgs[n];
		size_t cap = sum(m->r, m->nr), len = sum(m->s, m->ns), j = 0;
		unsigned char *buf = malloc(cap);
		uint64_t flags = 0;
		int err;

		if (!buf)
			DIE("out of memory");
		memset(buf, 0xee, cap);
		cut(buf, m->r, m->nr, iov);
		if (!m->tagged && n == 0) {
			POST(fi_recvv(ep, iov, NULL, (size_t)m->nr, peer, &ctx));
		} else if (!m->tagged) {
			struct fi_msg msg = { .msg_iov = iov,
					      .iov_count = (size_t)m->nr,
					      .addr = peer,
					      .context = &ctx };

			POST(fi_recvmsg(ep, &msg, FI_COMPLETION));
		} else if (n == 3) {
			struct fi_msg_tagged msg = { .msg_iov = iov,
						     .iov_count = (size_t)m->nr,
						     .addr = peer,
						     .tag = m->tag,
						     .context = &ctx };

			POST(fi_trecvmsg(ep, &msg, FI_COMPLETION));
		} else if (m->nr == 1) {
			POST(fi_trecv(ep, iov[0].iov_base, iov[0].iov_len, NULL, peer, m->tag, 0,
				      &ctx));
		} else {
			POST(fi_trecvv(ep, iov, NULL, (size_t)m->nr, peer, m->tag, 0, &ctx));
		}
		memset(&e, 0, sizeof(e));
		err = wait_for(&ctx, &flags, &e);
		CHECK(flags & FI_RECV && flags & (m->tagged ? FI_TAGGED : FI_MSG),
		      "message %zu: flags %#" PRIx64, n, flags);
		if (!err) {
			CHECK(last.len == len, "message %zu: len %zu, sent %zu", n, last.len, len);
			CHECK(n != 1 || ((flags & FI_REMOTE_CQ_DATA) && last.data == MSG_DATA),
			      "message %zu: data %#" PRIx64, n, (uint64_t)last.data);
		}
		if (len > cap) {
			/* Too long for the iovs: cut, and said so. */
			CHECK(err == FI_ETRUNC && e.olen == len - cap,
			      "message %zu: err %d olen %zu, expected FI_ETRUNC and %zu", n, err,
			      e.olen, len - cap);
			len = cap;
		} else {
			CHECK(!err, "message %zu: %s", n, fi_strerror(err));
		}
		for (int i = 0; i < m->nr && j < len; i++) {
			for (size_t b = 0; b < iov[i].iov_len && j < len; b++, j++) {
				if (((unsigned char *)iov[i].iov_base)[b] != msg_pat(n, j)) {
					CHECK(0, "message %zu: byte %zu (iov %d) is %#x", n, j, i,
					      ((unsigned char *)iov[i].iov_base)[b]);
					i = m->nr;
					break;
				}
			}
		}
		free(buf);
	}
	printf("messages of several iovs received\n");
}

static int serve(const char *node, const char *port, const char *pnode, const char *pport)
{
	unsigned char *win, *model;
	struct fid_mr *mr;
	struct reply r = { 0 };
	int ctx;

	setup(node, port);
	if (posix_memalign((void **)&win, 4096, WIN) || !(model = malloc(WIN)))
		DIE("out of memory");
	for (size_t i = 0; i < WIN; i++)
		win[i] = pat0(i);
	/* Registered before the endpoint exists: the endpoint must serve it. */
	if (getenv("LATE_MR")) {
		open_ep(FI_CQ_FORMAT_DATA, pnode, pport);
		TRY(fi_mr_reg(domain, win, WIN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			      NULL));
	} else {
		TRY(fi_mr_reg(domain, win, WIN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			      NULL));
		open_ep(FI_CQ_FORMAT_DATA, pnode, pport);
	}
	CHECK(fi_mr_key(mr) != 0 && fi_mr_key(mr) != FI_KEY_NOTAVAIL, "key %#" PRIx64,
	      fi_mr_key(mr));

	target_win = win;
	r.key = fi_mr_key(mr);
	r.len = WIN;
	POST(fi_send(ep, &r, sizeof(r), NULL, peer, &ctx));
	CHECK(!wait_for(&ctx, NULL, NULL), "send key");
	if (getenv("WD_ONLY")) {
		POST(fi_recv(ep, &r, sizeof(r), NULL, peer, &ctx));
		CHECK(!wait_for(&ctx, NULL, NULL), "done");
		drain_remote();
		TRY(fi_close(&mr->fid));
		teardown();
		free(win);
		free(model);
		printf("fi_rma_check server (writes with data only): %s\n",
		       fails ? "FAILED" : "ok");
		return fails ? 1 : 0;
	}
	server_msgs();

	/* The client's model of the window, then our verdict. */
	POST(fi_recv(ep, model, WIN, NULL, peer, &ctx));
	CHECK(!wait_for(&ctx, NULL, NULL), "model");
	drain_remote();
	for (size_t i = 0; i < WIN; i++) {
		if (win[i] != model[i]) {
			CHECK(0, "window byte %zu is %#x, the client expects %#x", i, win[i],
			      model[i]);
			break;
		}
	}
	r.status = fails;
	POST(fi_send(ep, &r, sizeof(r), NULL, peer, &ctx));
	CHECK(!wait_for(&ctx, NULL, NULL), "send verdict");
	TRY(fi_close(&mr->fid));
	teardown();
	free(win);
	free(model);
	printf("fi_rma_check server: %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}

static uint64_t key;
static unsigned char *model;

/* Read the whole window and compare it with the model; @how names the read call. */
static void read_check(int how)
{
	unsigned char *buf = malloc(WIN), *got = buf;
	size_t h = WIN / 2, l[3] = { 5, WIN - 5 - 65536, 65536 };
	struct iovec iov[3];
	uint64_t flags = 0;
	int ctx;

	if (!buf)
		DIE("out of memory");
	memset(buf, 0xee, WIN);
	if (how == 0) {
		POST(fi_read(ep, buf, WIN, NULL, peer, 0, key, &ctx));
	} else if (how == 1) {
		iov[0] = (struct iovec){ buf, WIN };
		POST(fi_readv(ep, iov, NULL, 1, peer, 0, key, &ctx));
	} else if (how == 3) {
		cut(buf, l, 3, iov);
		POST(fi_readv(ep, iov, NULL, 3, peer, 0, key, &ctx));
	} else if (how == 4) {
		/* Two remote ranges, the second half first, over three local iovs. */
		struct fi_rma_iov riov[2] = { { h, WIN - h, key }, { 0, h, key } };
		struct fi_msg_rma msg = { .msg_iov = iov,
					  .iov_count = 3,
					  .addr = peer,
					  .rma_iov = riov,
					  .rma_iov_count = 2,
					  .context = &ctx };

		iov[0] = (struct iovec){ buf, 1 };
		iov[1] = (struct iovec){ buf + 1, WIN - h - 1 };
		iov[2] = (struct iovec){ buf + WIN - h, h };
		POST(fi_readmsg(ep, &msg, FI_COMPLETION));
	} else {
		struct fi_rma_iov riov = { 0, WIN, key };
		struct fi_msg_rma msg = { .msg_iov = iov,
					  .iov_count = 1,
					  .addr = peer,
					  .rma_iov = &riov,
					  .rma_iov_count = 1,
					  .context = &ctx };

		iov[0] = (struct iovec){ buf, WIN };
		POST(fi_readmsg(ep, &msg, FI_COMPLETION));
	}
	CHECK(!wait_for(&ctx, &flags, NULL), "read %d", how);
	CHECK((flags & (FI_RMA | FI_READ)) == (FI_RMA | FI_READ), "read flags %#" PRIx64, flags);
	if (how >= 3) {
		/* The bytes in the order the iovs and remote ranges name them. */
		got = malloc(WIN);
		if (!got)
			DIE("out of memory");
		for (size_t i = 0, o = 0; i < 3; o += iov[i++].iov_len)
			memcpy(got + o, iov[i].iov_base, iov[i].iov_len);
		if (how == 4) {
			memcpy(buf, got + WIN - h, h);
			memcpy(buf + h, got, WIN - h);
			memcpy(got, buf, WIN);
		}
	}
	for (size_t i = 0; i < WIN; i++) {
		if (got[i] != model[i]) {
			CHECK(0, "read %d: byte %zu is %#x, expected %#x", how, i, got[i],
			      model[i]);
			break;
		}
	}
	if (got != buf)
		free(got);
	free(buf);
}

static void write_range(int how, size_t off, size_t len, unsigned char seed)
{
	unsigned char *buf = malloc(len);
	uint64_t flags = 0;
	int ctx;

	if (!buf)
		DIE("out of memory");
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(seed + i * 13 + (i >> 8));
	if (how == 0) {
		POST(fi_write(ep, buf, len, NULL, peer, off, key, &ctx));
	} else if (how == 1) {
		struct iovec iov = { buf, len };

		POST(fi_writev(ep, &iov, NULL, 1, peer, off, key, &ctx));
	} else if (how == 2) {
		struct iovec iov = { buf, len };
		struct fi_rma_iov riov = { off, len, key };
		struct fi_msg_rma msg = { .msg_iov = &iov,
					  .iov_count = 1,
					  .addr = peer,
					  .rma_iov = &riov,
					  .rma_iov_count = 1,
					  .context = &ctx };

		POST(fi_writemsg(ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE));
	} else {
		/* Injected: no completion; the buffer is ours again at once. */
		POST(fi_inject_write(ep, buf, len, peer, off, key));
		memset(buf, 0, len);
	}
	if (how != 3) {
		CHECK(!wait_for(&ctx, &flags, NULL), "write %d", how);
		CHECK((flags & (FI_RMA | FI_WRITE)) == (FI_RMA | FI_WRITE), "write flags %#" PRIx64,
		      flags);
		memcpy(model + off, buf, len);
	} else {
		for (size_t i = 0; i < len; i++)
			model[off + i] = (unsigned char)(seed + i * 13 + (i >> 8));
	}
	free(buf);
}

/* The writes with CQ data of wds[], two refused ones before the last; pass @p. */
static void writedata(size_t p)
{
	struct fi_cq_err_entry e;
	unsigned char junk[64] = { 0 };
	int ctx, err;

	for (size_t k = 0; k < WD_COUNT; k++) {
		const struct wd *w = &wds[k];
		size_t len = w->len[0] + w->len[1], g = p * WD_COUNT + k;
		unsigned char *buf = malloc(len + 1);
		uint64_t flags = 0;
		struct iovec iov[3];
		struct fi_rma_iov riov[2] = { { wd_off(g, 0), w->len[0], key },
					      { wd_off(g, 1), w->len[1], key } };

		if (!buf)
			DIE("out of memory");
		for (size_t j = 0; j < len; j++)
			buf[j] = wd_pat(g, j);
		if (k == WD_COUNT - 1) {
			/* A wrong key and a range past the end: errors, and no target completion.
			 */
			POST(fi_writedata(ep, junk, sizeof(junk), NULL, 0xbad, peer, 2800000,
					  key ^ 0x4004, &ctx));
			err = wait_for(&ctx, NULL, &e);
			CHECK(err == FI_EKEYREJECTED, "write with data, wrong key: err %d", err);
			POST(fi_writedata(ep, junk, sizeof(junk), NULL, 0xbad, peer, WIN - 10, key,
					  &ctx));
			err = wait_for(&ctx, NULL, &e);
			CHECK(err && e.prov_errno == ERANGE, "write with data past the end: err %d",
			      err);
		}
		if (k == 2) {
			POST(fi_inject_writedata(ep, buf, len, WD_DATA(g), peer, wd_off(g, 0),
						 key));
			memset(buf, 0, len); /* ours again at once */
		} else if (k == 3) {
			/* Three local iovs over two remote ranges. */
			struct fi_msg_rma msg = { .msg_iov = iov,
						  .iov_count = 3,
						  .addr = peer,
						  .rma_iov = riov,
						  .rma_iov_count = 2,
						  .context = &ctx,
						  .data = WD_DATA(g) };

			iov[0] = (struct iovec){ buf, 1 };
			iov[1] = (struct iovec){ buf + 1, 7000 };
			iov[2] = (struct iovec){ buf + 7001, len - 7001 };
			POST(fi_writemsg(ep, &msg, FI_COMPLETION | FI_REMOTE_CQ_DATA));
		} else {
			POST(fi_writedata(ep, len ? buf : NULL, len, NULL, WD_DATA(g), peer,
					  wd_off(g, 0), key, &ctx));
		}
		if (k != 2) {
			CHECK(!wait_for(&ctx, &flags, NULL), "write with data %zu", k);
			CHECK((flags & (FI_RMA | FI_WRITE)) == (FI_RMA | FI_WRITE),
			      "write with data %zu: flags %#" PRIx64, k, flags);
		}
		for (size_t j = 0; j < w->len[0]; j++)
			model[wd_off(g, 0) + j] = wd_pat(g, j);
		for (size_t j = 0; j < w->len[1]; j++)
			model[wd_off(g, 1) + j] = wd_pat(g, w->len[0] + j);
		free(buf);
	}
	printf("writes with CQ data checked\n");
}

/* fi_writev and fi_writemsg of three local iovs (the latter over two remote ranges). */
static void write_iovs(size_t off, size_t len, size_t gap, unsigned char seed)
{
	unsigned char *buf = malloc(len);
	size_t l[3] = { len / 3, 1, len - len / 3 - 1 }, a = len / 2, j = 0;
	struct fi_rma_iov riov[2] = { { off, a, key }, { off + a + gap, len - a, key } };
	struct iovec iov[3];
	int ctx;

	if (!buf)
		DIE("out of memory");
	cut(buf, l, 3, iov);
	for (int i = 0; i < 3; i++)
		for (size_t b = 0; b < l[i]; b++)
			((unsigned char *)iov[i].iov_base)[b] = (unsigned char)(seed + 3 * j++);
	if (!gap) {
		POST(fi_writev(ep, iov, NULL, 3, peer, off, key, &ctx));
	} else {
		struct fi_msg_rma msg = { .msg_iov = iov,
					  .iov_count = 3,
					  .addr = peer,
					  .rma_iov = riov,
					  .rma_iov_count = 2,
					  .context = &ctx };

		POST(fi_writemsg(ep, &msg, FI_COMPLETION));
		/* The two sides must hold the same number of bytes. */
		riov[1].len++;
		CHECK(fi_writemsg(ep, &msg, FI_COMPLETION) == -FI_EINVAL,
		      "a write of more remote than local bytes accepted");
	}
	CHECK(!wait_for(&ctx, NULL, NULL), "write of 3 iovs");
	for (j = 0; j < len; j++)
		model[off + j + (j < a ? 0 : gap)] = (unsigned char)(seed + 3 * j);
	free(buf);
}

/* The model's value of the element of @size bytes at @off. */
static uint64_t mget(size_t off, unsigned int size)
{
	uint32_t v32;
	uint64_t v64;

	if (size == 4) {
		memcpy(&v32, model + off, 4);
		return v32;
	}
	memcpy(&v64, model + off, 8);
	return v64;
}

static void mset(size_t off, unsigned int size, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (size == 4)
		memcpy(model + off, &v32, 4);
	else
		memcpy(model + off, &v, 8);
}

/*
 * One atomic on the element at @off: fi_atomic (kind 0), fi_fetch_atomic
 * (1) or fi_compare_atomic (2), checking the fetched value and the model.
 */
static void atomic_one(int kind, enum fi_datatype dt, enum fi_op op, size_t off, uint64_t operand,
		       uint64_t compare)
{
	unsigned int size = dt == FI_INT32 || dt == FI_UINT32 ? 4 : 8;
	uint64_t old = mget(off, size), mask = size == 4 ? 0xffffffffULL : ~0ULL;
	uint64_t res = 0x5a5a5a5a5a5a5a5aULL, flags = 0, want, now_v;
	unsigned char obuf[8], cbuf[8], rbuf[8];
	uint32_t o32 = (uint32_t)operand, c32 = (uint32_t)compare;
	int ctx;

	memcpy(obuf, size == 4 ? (void *)&o32 : (void *)&operand, size);
	memcpy(cbuf, size == 4 ? (void *)&c32 : (void *)&compare, size);
	memset(rbuf, 0xa5, sizeof(rbuf));
	if (kind == 0)
		POST(fi_atomic(ep, obuf, 1, NULL, peer, off, key, dt, op, &ctx));
	else if (kind == 1)
		POST(fi_fetch_atomic(ep, obuf, 1, NULL, rbuf, NULL, peer, off, key, dt, op, &ctx));
	else
		POST(fi_compare_atomic(ep, obuf, 1, NULL, cbuf, NULL, rbuf, NULL, peer, off, key,
				       dt, op, &ctx));
	CHECK(!wait_for(&ctx, &flags, NULL), "atomic %d op %d dt %d", kind, op, dt);
	CHECK((flags & FI_ATOMIC) && (flags & (kind ? FI_READ : FI_WRITE)),
	      "atomic flags %#" PRIx64, flags);
	switch (op) {
	case FI_SUM:
		now_v = (old + operand) & mask;
		break;
	case FI_ATOMIC_WRITE:
		now_v = operand & mask;
		break;
	case FI_CSWAP:
		now_v = old == (compare & mask) ? operand & mask : old;
		break;
	default:
		now_v = old;
	}
	if (kind) {
		uint32_t r32;

		if (size == 4) {
			memcpy(&r32, rbuf, 4);
			res = r32;
			CHECK(rbuf[4] == 0xa5, "a 4-byte fetch wrote past its result");
		} else {
			memcpy(&res, rbuf, 8);
		}
		want = old;
		CHECK(res == want,
		      "atomic %d op %d dt %d at %zu fetched %#" PRIx64 ", expected %#" PRIx64, kind,
		      op, dt, off, res, want);
	}
	mset(off, size, now_v);
}

static void atomics(void)
{
	static const enum fi_datatype dts[] = { FI_UINT32, FI_INT32, FI_UINT64, FI_INT64 };

	for (unsigned int t = 0; t < 4; t++) {
		enum fi_datatype dt = dts[t];
		unsigned int size = t < 2 ? 4 : 8;
		size_t off = AT_OFF + t * 64;
		uint64_t big = size == 4 ? 0x89abcdefULL : 0x0123456789abcdefULL;

		atomic_one(1, dt, FI_ATOMIC_READ, off, 0, 0);
		atomic_one(1, dt, FI_SUM, off, 5, 0);
		atomic_one(0, dt, FI_SUM, off, size == 4 ? 0xfffffffdULL : (uint64_t)-3, 0);
		atomic_one(1, dt, FI_SUM, off, big, 0); /* carries across bytes */
		atomic_one(1, dt, FI_ATOMIC_WRITE, off, big ^ 0x5555, 0);
		atomic_one(0, dt, FI_ATOMIC_WRITE, off + size, 0x77, 0);
		/* A compare that misses leaves the value; one that hits swaps. */
		atomic_one(2, dt, FI_CSWAP, off, 1, mget(off, size) ^ 1);
		atomic_one(2, dt, FI_CSWAP, off, size == 4 ? 0xfeedf00dULL : 0xfeedf00ddeadbeefULL,
			   mget(off, size));
		atomic_one(1, dt, FI_ATOMIC_READ, off, 0, 0);
		atomic_one(1, dt, FI_ATOMIC_READ, off + size, 0, 0);
	}
	/* Several elements in one call: each its own atomic. */
	{
		uint64_t ops[4] = { 1, 2, 3, 0x100000000ULL }, res[4], flags = 0;
		size_t off = AT_OFF + 512;
		int ctx;

		POST(fi_fetch_atomic(ep, ops, 4, NULL, res, NULL, peer, off, key, FI_UINT64, FI_SUM,
				     &ctx));
		CHECK(!wait_for(&ctx, &flags, NULL), "4-element fetch-add");
		for (int i = 0; i < 4; i++) {
			CHECK(res[i] == mget(off + 8 * i, 8), "element %d fetched %#" PRIx64, i,
			      res[i]);
			mset(off + 8 * i, 8, mget(off + 8 * i, 8) + ops[i]);
		}
	}
}

/* What the query calls report: exactly the module's atomics. */
static void queries(void)
{
	static const enum fi_datatype ints[] = { FI_INT32, FI_UINT32, FI_INT64, FI_UINT64 };
	static const enum fi_datatype others[] = { FI_INT8, FI_UINT16, FI_FLOAT, FI_DOUBLE };
	static const enum fi_op never[] = { FI_MIN,  FI_MAX, FI_PROD, FI_BOR,	FI_BAND,
					    FI_BXOR, FI_LOR, FI_LAND, FI_MSWAP, FI_CSWAP_NE };
	struct fi_atomic_attr attr;
	size_t count;

	for (unsigned int i = 0; i < 4; i++) {
		unsigned int size = i < 2 ? 4 : 8;

		CHECK(!fi_query_atomic(domain, ints[i], FI_SUM, &attr, 0) && attr.size == size &&
			      attr.count >= 1,
		      "query sum %d", ints[i]);
		CHECK(!fi_query_atomic(domain, ints[i], FI_ATOMIC_WRITE, &attr, 0), "query write");
		CHECK(!fi_query_atomic(domain, ints[i], FI_SUM, &attr, FI_FETCH_ATOMIC),
		      "query fetch sum");
		CHECK(!fi_query_atomic(domain, ints[i], FI_ATOMIC_WRITE, &attr, FI_FETCH_ATOMIC),
		      "query swap");
		CHECK(!fi_query_atomic(domain, ints[i], FI_ATOMIC_READ, &attr, FI_FETCH_ATOMIC),
		      "query read");
		CHECK(!fi_query_atomic(domain, ints[i], FI_CSWAP, &attr, FI_COMPARE_ATOMIC) &&
			      attr.size == size,
		      "query cswap");
		CHECK(!fi_atomicvalid(ep, ints[i], FI_SUM, &count) && count >= 1, "atomicvalid");
		CHECK(!fi_fetch_atomicvalid(ep, ints[i], FI_ATOMIC_WRITE, &count),
		      "fetch_atomicvalid");
		CHECK(!fi_compare_atomicvalid(ep, ints[i], FI_CSWAP, &count),
		      "compare_atomicvalid");
		CHECK(fi_compare_atomicvalid(ep, ints[i], FI_SUM, &count), "cswap-only call sum");
		CHECK(fi_atomicvalid(ep, ints[i], FI_CSWAP, &count), "plain call cswap");
		for (unsigned int j = 0; j < sizeof(never) / sizeof(never[0]); j++) {
			CHECK(fi_query_atomic(domain, ints[i], never[j], &attr, 0) &&
				      fi_query_atomic(domain, ints[i], never[j], &attr,
						      FI_FETCH_ATOMIC) &&
				      fi_query_atomic(domain, ints[i], never[j], &attr,
						      FI_COMPARE_ATOMIC),
			      "op %d on type %d offered", never[j], ints[i]);
		}
	}
	for (unsigned int i = 0; i < 4; i++)
		CHECK(fi_query_atomic(domain, others[i], FI_SUM, &attr, 0) &&
			      fi_fetch_atomicvalid(ep, others[i], FI_SUM, &count),
		      "type %d offered", others[i]);
}

/*
 * What fi_info does not offer is refused, not half done: a registration of
 * two ranges (mr_iov_limit 1: the module registers one range per key) and
 * counters (no FI_RMA_EVENT either, which would feed them).
 */
static void refused_features(void)
{
	static unsigned char area[256];
	struct iovec two[2] = { { area, 64 }, { area + 128, 64 } };
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	struct fid_cntr *cntr = NULL;
	struct fid_mr *m = NULL;
	ssize_t r;

	r = fi_mr_regv(domain, two, 2, FI_REMOTE_WRITE, 0, 0, 0, &m, NULL);
	CHECK(r == -FI_EINVAL && !m, "registration of two ranges: %zd", r);
	r = fi_mr_regv(domain, two, 1, FI_REMOTE_WRITE, 0, 0, 0, &m, NULL);
	CHECK(!r && m && fi_mr_key(m) != FI_KEY_NOTAVAIL, "registration of one range: %zd", r);
	if (m)
		CHECK(!fi_close(&m->fid), "closing a one-range registration");
	r = fi_cntr_open(domain, &ca, &cntr, NULL);
	CHECK(r && !cntr, "a counter opened: %zd", r);
}

/* A refused operation completes with an error that fi_cq_readerr reports. */
static void refusals(void)
{
	struct fi_cq_err_entry e;
	unsigned char buf[256];
	uint64_t v = 1, res;
	int ctx, err;

	memset(buf, 0x42, sizeof(buf));
	POST(fi_write(ep, buf, sizeof(buf), NULL, peer, 4096, key ^ 0x10001, &ctx));
	err = wait_for(&ctx, NULL, &e);
	CHECK(err == FI_EKEYREJECTED && e.prov_errno == ENOKEY,
	      "write with a wrong key: err %d (%s) prov_errno %d", err, fi_strerror(err),
	      e.prov_errno);
	CHECK(e.flags & FI_WRITE, "error flags %#" PRIx64, (uint64_t)e.flags);
	POST(fi_read(ep, buf, sizeof(buf), NULL, peer, 4096, key + 1, &ctx));
	err = wait_for(&ctx, NULL, &e);
	CHECK(err == FI_EKEYREJECTED && e.prov_errno == ENOKEY, "read with a wrong key: err %d",
	      err);
	POST(fi_fetch_atomic(ep, &v, 1, NULL, &res, NULL, peer, AT_OFF, ~key, FI_UINT64, FI_SUM,
			     &ctx));
	err = wait_for(&ctx, NULL, &e);
	CHECK(err == FI_EKEYREJECTED && e.prov_errno == ENOKEY, "atomic with a wrong key: err %d",
	      err);
	/* Past the end of the registration. */
	POST(fi_write(ep, buf, sizeof(buf), NULL, peer, WIN - 100, key, &ctx));
	err = wait_for(&ctx, NULL, &e);
	CHECK(err && e.prov_errno == ERANGE, "write past the end: err %d prov_errno %d", err,
	      e.prov_errno);
	/* A message needs an address the endpoint knows. */
	CHECK(fi_write(ep, buf, 8, NULL, peer + 77, 0, key, &ctx) == -FI_EINVAL,
	      "write to an unknown address");
	CHECK(fi_atomic(ep, &v, 1, NULL, peer, AT_OFF, key, FI_FLOAT, FI_SUM, &ctx) ==
		      -FI_EOPNOTSUPP,
	      "float atomic accepted");
	CHECK(fi_atomic(ep, &v, 1, NULL, peer, AT_OFF, key, FI_UINT64, FI_BOR, &ctx) ==
		      -FI_EOPNOTSUPP,
	      "bor atomic accepted");
	refused_features();
}

/* Every operation on the window of key @key at @peer, checked against @model. */
static void exercise(void)
{
	queries();
	read_check(0);
	printf("read %u bytes\n", WIN);
	write_range(0, 100, 1000000, 1); /* several pieces, unaligned */
	write_range(1, 1234567, 1, 2);
	write_range(2, 2000000, 65537, 3);
	write_range(3, 2100001, 200, 4); /* injected */
	write_range(0, 0, 7, 5);
	write_range(0, WIN - 3, 3, 6); /* the last bytes */
	read_check(1);
	write_iovs(2900000, 40000, 0, 8);
	write_iovs(2950000, 30000, 1000, 9);
	read_check(3);
	printf("writes checked\n");
	writedata(0);
	read_check(4);
	atomics();
	read_check(2);
	printf("atomics checked\n");
	refusals();
	/* The endpoint still works after refusals. */
	write_range(0, 3000000, 4096, 7);
	read_check(0);
	printf("refusals checked\n");
}

static int client(const char *node, const char *port, const char *pnode, const char *pport)
{
	struct reply r;
	int ctx;

	setup(node, port);
	open_ep(FI_CQ_FORMAT_DATA, pnode, pport);
	POST(fi_recv(ep, &r, sizeof(r), NULL, peer, &ctx));
	CHECK(!wait_for(&ctx, NULL, NULL), "key");
	CHECK(r.len == WIN, "window of %" PRIu64 " bytes", r.len);
	key = r.key;
	if (!(model = malloc(WIN)))
		DIE("out of memory");
	for (size_t i = 0; i < WIN; i++)
		model[i] = pat0(i);
	if (getenv("WD_ONLY")) {
		for (size_t p = 0; p < wd_passes; p++)
			writedata(p);
		POST(fi_send(ep, &r, sizeof(r), NULL, peer, &ctx));
		CHECK(!wait_for(&ctx, NULL, NULL), "send done");
		teardown();
		free(model);
		printf("fi_rma_check client (writes with data only): %s\n",
		       fails ? "FAILED" : "ok");
		return fails ? 1 : 0;
	}
	client_msgs();

	exercise();

	POST(fi_send(ep, model, WIN, NULL, peer, &ctx));
	CHECK(!wait_for(&ctx, NULL, NULL), "send the model");
	POST(fi_recv(ep, &r, sizeof(r), NULL, peer, &ctx));
	CHECK(!wait_for(&ctx, NULL, NULL), "verdict");
	CHECK(r.status == 0, "the server found %d differences", r.status);
	teardown();
	free(model);
	printf("fi_rma_check client: %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}

/*
 * One process whose window is reached through its own address in its own
 * AV (FI_LOCAL_COMM), as Open MPI's btl ofi reaches a rank's own window
 * when the ranks span nodes; then its memory must equal the model.
 */
static int self_check(const char *node, const char *port)
{
	unsigned char *win;
	struct fid_mr *mr;

	setup(node, port);
	if (posix_memalign((void **)&win, 4096, WIN) || !(model = malloc(WIN)))
		DIE("out of memory");
	for (size_t i = 0; i < WIN; i++)
		win[i] = model[i] = pat0(i);
	TRY(fi_mr_reg(domain, win, WIN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL));
	open_ep(FI_CQ_FORMAT_DATA, node, port);
	key = fi_mr_key(mr);
	target_win = win;
	exercise();
	drain_remote();
	for (size_t i = 0; i < WIN; i++) {
		if (win[i] != model[i]) {
			CHECK(0, "own window byte %zu is %#x, expected %#x", i, win[i], model[i]);
			break;
		}
	}
	TRY(fi_close(&mr->fid));
	teardown();
	free(win);
	free(model);
	printf("fi_rma_check self: %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Up to 3 passes: wd_off() keeps them apart in the window. */
	if (getenv("WD_ONLY") && atoi(getenv("WD_ONLY")) > 1)
		wd_passes = atoi(getenv("WD_ONLY")) > 3 ? 3 : (size_t)atoi(getenv("WD_ONLY"));
	if (argc == 6 && !strcmp(argv[1], "-s"))
		return serve(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 6 && !strcmp(argv[1], "-c"))
		return client(argv[2], argv[3], argv[4], argv[5]);
	if (argc == 4 && !strcmp(argv[1], "-l"))
		return self_check(argv[2], argv[3]);
	fprintf(stderr, "usage: %s -s|-c ADDR PORT PEER PEERPORT | -l ADDR PORT\n", argv[0]);
	return 2;
}
