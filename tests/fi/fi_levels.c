// SPDX-License-Identifier: MIT
/*
 * fi_levels: the urel provider at every threading level libfabric defines.
 * For each level (and FI_THREAD_UNSPEC, which must come back as
 * FI_THREAD_SAFE), fi_getinfo must return the level asked for, and a domain
 * opened at it must carry traffic: two endpoints of the domain, each with
 * its own CQ and sharing one AV, exchange tagged and untagged messages of
 * every protocol (tiny, eager, rendezvous; injected, with completions, into
 * several iovs), each checked byte for byte, with its tag and length, and
 * no completion missing or left over. An unknown level must be refused by
 * fi_getinfo and by fi_domain. One thread: the promise every level makes.
 *
 * Usage: fi_levels ADDR PORT   (binds ADDR:PORT + 0 .. 2 * levels - 1)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_tagged.h>

#include "fi_check.h"

#define ROUNDS 40
#define BIG 100000 /* a rendezvous message */
#define MID 4096 /* an eager one */
#define TINY 8

static int fails;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: " __VA_ARGS__);                                              \
			printf("\n");                                                              \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

static struct fi_info *getinfo(const char *node, int port, enum fi_threading level, int *ret)
{
	struct fi_info *hints = fi_allocinfo(), *fi = NULL;
	char service[16];

	if (!hints)
		DIE("fi_allocinfo");
	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = level;
	hints->fabric_attr->prov_name = strdup("urel");
	snprintf(service, sizeof(service), "%d", port);
	*ret = fi_getinfo(FI_VERSION(1, 17), node, service, FI_SOURCE, hints, &fi);
	fi_freeinfo(hints);
	return fi;
}

/* One side: an endpoint with its own CQ. */
struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t self;
	int pending; /* completions still expected */
};

static void fill(unsigned char *b, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(seed * 131 + i * 7 + 1);
}

/* Read whatever completed on @s; every entry must be one of ours (a context). */
static void drain(struct side *s, const char *level)
{
	struct fi_cq_tagged_entry c[8];
	ssize_t n = fi_cq_read(s->cq, c, 8);

	if (n == -FI_EAGAIN)
		return;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry e = { 0 };

		fi_cq_readerr(s->cq, &e, 0);
		DIE("%s: error completion: %s", level, fi_strerror(e.err));
	}
	if (n < 0)
		DIE("%s: fi_cq_read: %s", level, fi_strerror((int)-n));
	for (ssize_t i = 0; i < n; i++) {
		int *done = c[i].op_context;

		CHECK(done, "%s: a completion without a context", level);
		if (done)
			(*done)++;
		s->pending--;
	}
}

/* Progress both sides until neither expects a completion; 120 s at most. */
static void settle(struct side *a, struct side *b, const char *level)
{
	double end = now() + 120;

	while (a->pending > 0 || b->pending > 0) {
		drain(a, level);
		drain(b, level);
		if (now() > end)
			DIE("%s: completions missing (%d, %d)", level, a->pending, b->pending);
	}
	CHECK(!a->pending && !b->pending, "%s: more completions than operations", level);
}

#define POST(s1, s2, level, call)                                                                  \
	do {                                                                                       \
		ssize_t r_;                                                                        \
		while ((r_ = (call)) == -FI_EAGAIN) {                                              \
			drain(s1, level);                                                          \
			drain(s2, level);                                                          \
		}                                                                                  \
		if (r_)                                                                            \
			DIE("%s: %s: %s", level, #call, fi_strerror((int)-r_));                    \
	} while (0)

/* The rounds of traffic between @a and @b (one thread, both sides). */
static void traffic(struct side *a, struct side *b, const char *level)
{
	static unsigned char out[BIG], in[BIG], in2[BIG];

	for (int r = 0; r < ROUNDS; r++) {
		size_t len = r % 10 == 9 ? BIG : r % 3 ? TINY : MID;
		uint64_t tag = 0x1000 + (uint64_t)r;
		int rx = 0, tx = 0, urx = 0;
		struct iovec iov[2] = { { in2, 3 }, { in2 + 3, BIG - 3 } };

		fill(out, len, (unsigned)r);
		memset(in, 0, len);
		memset(in2, 0, len);
		/* Tagged a -> b, with a completion on both sides. */
		POST(a, b, level, fi_trecv(b->ep, in, BIG, NULL, a->self, tag, 0, &rx));
		POST(a, b, level, fi_tsend(a->ep, out, len, NULL, b->self, tag, &tx));
		b->pending++;
		a->pending++;
		/* Untagged b -> a into two iovs: injected when small, else with a completion. */
		POST(a, b, level, fi_recvv(a->ep, iov, NULL, 2, b->self, &urx));
		a->pending++;
		if (len <= TINY) {
			POST(a, b, level, fi_inject(b->ep, out, len, a->self));
		} else {
			int utx = 0;

			POST(a, b, level, fi_send(b->ep, out, len, NULL, a->self, &utx));
			b->pending++;
			settle(a, b, level);
			CHECK(utx == 1, "%s: round %d: send completed %d times", level, r, utx);
		}
		settle(a, b, level);
		CHECK(rx == 1 && tx == 1 && urx == 1,
		      "%s: round %d: completions %d %d %d, one each expected", level, r, rx, tx,
		      urx);
		CHECK(!memcmp(in, out, len), "%s: round %d: tagged bytes differ (%zu B)", level, r,
		      len);
		CHECK(!memcmp(in2, out, len), "%s: round %d: untagged bytes differ (%zu B)", level,
		      r, len);
	}
}

static void one_level(const char *node, int port, enum fi_threading level)
{
	const char *name = fi_tostr(&level, FI_TYPE_THREADING);
	enum fi_threading want = level == FI_THREAD_UNSPEC ? FI_THREAD_SAFE : level;
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE };
	struct fi_info *ib;
	struct side a = { 0 }, b = { 0 };
	fi_addr_t addrs[2];
	int ret;

	/* fi_tostr's buffer is reused: keep the name. */
	char label[40];

	snprintf(label, sizeof(label), "%s", name);
	info = getinfo(node, port, level, &ret);
	if (!info)
		DIE("%s: fi_getinfo: %s", label, fi_strerror(-ret));
	ib = getinfo(node, port + 1, level, &ret);
	if (!ib)
		DIE("%s: fi_getinfo (second port): %s", label, fi_strerror(-ret));
	CHECK(info->domain_attr->threading == want, "%s: fi_getinfo gave threading %s", label,
	      fi_tostr(&info->domain_attr->threading, FI_TYPE_THREADING));
	TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
	TRY(fi_domain(fabric, info, &domain, NULL));
	TRY(fi_cq_open(domain, &cqa, &a.cq, NULL));
	TRY(fi_cq_open(domain, &cqa, &b.cq, NULL));
	{
		struct fi_av_attr ava = { .type = FI_AV_TABLE };

		TRY(fi_av_open(domain, &ava, &av, NULL));
	}
	TRY(fi_endpoint(domain, info, &a.ep, NULL));
	TRY(fi_endpoint(domain, ib, &b.ep, NULL));
	TRY(fi_ep_bind(a.ep, &a.cq->fid, FI_TRANSMIT | FI_RECV));
	TRY(fi_ep_bind(b.ep, &b.cq->fid, FI_TRANSMIT | FI_RECV));
	TRY(fi_ep_bind(a.ep, &av->fid, 0));
	TRY(fi_ep_bind(b.ep, &av->fid, 0));
	TRY(fi_enable(a.ep));
	TRY(fi_enable(b.ep));
	if (fi_av_insert(av, info->src_addr, 1, &addrs[0], 0, NULL) != 1 ||
	    fi_av_insert(av, ib->src_addr, 1, &addrs[1], 0, NULL) != 1)
		DIE("%s: fi_av_insert", label);
	a.self = addrs[0];
	b.self = addrs[1];
	traffic(&a, &b, label);
	/* Nothing left over on either side. */
	drain(&a, label);
	drain(&b, label);
	CHECK(!a.pending && !b.pending, "%s: completions left over", label);
	TRY(fi_close(&a.ep->fid));
	TRY(fi_close(&b.ep->fid));
	TRY(fi_close(&av->fid));
	TRY(fi_close(&a.cq->fid));
	TRY(fi_close(&b.cq->fid));
	TRY(fi_close(&domain->fid));
	TRY(fi_close(&fabric->fid));
	fi_freeinfo(ib);
	fi_freeinfo(info);
	printf("%s: %d rounds ok\n", label, ROUNDS);
}

/* A level libfabric does not define is refused, not quietly taken as another. */
static void unknown_level(const char *node, int port)
{
	enum fi_threading bogus = (enum fi_threading)(FI_THREAD_ENDPOINT + 40);
	struct fi_info *fi;
	int ret;

	fi = getinfo(node, port, bogus, &ret);
	CHECK(!fi && ret == -FI_ENODATA, "fi_getinfo took threading %d (%d)", (int)bogus, ret);
	fi_freeinfo(fi);
	info = getinfo(node, port, FI_THREAD_DOMAIN, &ret);
	if (!info)
		DIE("fi_getinfo: %s", fi_strerror(-ret));
	TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
	info->domain_attr->threading = bogus;
	ret = fi_domain(fabric, info, &domain, NULL);
	CHECK(ret == -FI_EINVAL, "fi_domain with threading %d: %d, -FI_EINVAL expected", (int)bogus,
	      ret);
	if (!ret)
		TRY(fi_close(&domain->fid));
	TRY(fi_close(&fabric->fid));
	fi_freeinfo(info);
}

int main(int argc, char **argv)
{
	static const enum fi_threading levels[] = {
		FI_THREAD_UNSPEC, FI_THREAD_SAFE,	FI_THREAD_FID,
		FI_THREAD_DOMAIN, FI_THREAD_COMPLETION, FI_THREAD_ENDPOINT,
	};
	int port;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (port = atoi(argv[2])) <= 0 || port > 65535 - 20) {
		fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		one_level(argv[1], port + 2 * (int)i, levels[i]);
	unknown_level(argv[1], port);
	/* peer, ep and cq belong to fi_check.h's one-endpoint programs. */
	(void)peer, (void)ep, (void)cq, (void)open_ep, (void)teardown;
	printf("fi_levels: %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
