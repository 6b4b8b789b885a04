/* SPDX-License-Identifier: MIT */
/*
 * What the provider's test programs (tests/fi/) share: fatal checks, the
 * one endpoint each process opens on its domain, its peer, and teardown.
 * Each program is one file, so these are its own statics.
 */
#ifndef FI_CHECK_H
#define FI_CHECK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define DIE(...)                                                                                   \
	do {                                                                                       \
		printf("FATAL: " __VA_ARGS__);                                                     \
		printf("\n");                                                                      \
		exit(2);                                                                           \
	} while (0)
#define TRY(call)                                                                                  \
	do {                                                                                       \
		ssize_t r_ = (call);                                                               \
		if (r_)                                                                            \
			DIE("%s: %s (%zd)", #call, fi_strerror((int)-r_), r_);                     \
	} while (0)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static fi_addr_t peer;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * On the domain: a CQ of @format for both directions, an address vector
 * holding the peer at @pnode:@pport, and the endpoint bound to them.
 */
static void open_ep(enum fi_cq_format format, const char *pnode, const char *pport)
{
	struct fi_cq_attr cqa = { .format = format, .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr ava = { .type = FI_AV_MAP };
	struct sockaddr_in sin = { .sin_family = AF_INET };

	TRY(fi_cq_open(domain, &cqa, &cq, NULL));
	TRY(fi_av_open(domain, &ava, &av, NULL));
	TRY(fi_endpoint(domain, info, &ep, NULL));
	TRY(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	TRY(fi_ep_bind(ep, &av->fid, 0));
	TRY(fi_enable(ep));
	sin.sin_port = htons((uint16_t)atoi(pport));
	if (inet_pton(AF_INET, pnode, &sin.sin_addr) != 1)
		DIE("bad peer address %s", pnode);
	if (fi_av_insert(av, &sin, 1, &peer, 0, NULL) != 1)
		DIE("fi_av_insert of the peer");
}

static void teardown(void)
{
	TRY(fi_close(&ep->fid));
	TRY(fi_close(&av->fid));
	TRY(fi_close(&cq->fid));
	TRY(fi_close(&domain->fid));
	TRY(fi_close(&fabric->fid));
	fi_freeinfo(info);
}

#endif /* FI_CHECK_H */
