// SPDX-License-Identifier: MIT
/*
 * libusnicrel: groups of a job's ranks. A group packs (context id, source
 * rank, tag) into match bits with its tag layout; its collectives (barrier,
 * allgather) are tagged messages with the tag's reserved bit set, in the
 * group's own context, so no user receive (even ANY_SOURCE, ANY_TAG) can
 * take them. A duplicate gets the lowest context id that no member uses yet,
 * agreed with an allgather.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"
#include "internal.h"
#include "job.h"
#include "msg/msg.h"
#include "msg/tag.h"

struct urel_group {
	struct urel_job *j;
	enum urel_tag_layout layout;
	struct urel_tag_limits lim;
	uint32_t ctx;
	int rank, size;
	int *ranks; /* group rank -> job rank */
	uint32_t coll; /* collectives so far: their internal tag */
};

static int urel_group_new(struct urel_job *j, enum urel_tag_layout layout, uint32_t ctx,
			  const int *ranks, int size, int rank, struct urel_group **gp)
{
	struct urel_group *g;
	int ret;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	ret = urel_tag_limits(layout, &g->lim);
	if (ret)
		goto err;
	ret = -ERANGE;
	if (ctx > g->lim.ctx_max || size - 1 > g->lim.src_max)
		goto err;
	ret = -ENOMEM;
	g->ranks = malloc((size_t)size * sizeof(*g->ranks));
	if (!g->ranks)
		goto err;
	memcpy(g->ranks, ranks, (size_t)size * sizeof(*g->ranks));
	g->j = j;
	g->layout = layout;
	g->ctx = ctx;
	g->size = size;
	g->rank = rank;
	*gp = g;
	return 0;
err:
	free(g);
	return ret;
}

UREL_API int urel_group_world(struct urel_job *j, enum urel_tag_layout layout,
			      struct urel_group **gp)
{
	int *ranks, ret;

	if (!j || !gp)
		return -EINVAL;
	ranks = malloc((size_t)j->size * sizeof(*ranks));
	if (!ranks)
		return -ENOMEM;
	for (int r = 0; r < j->size; r++)
		ranks[r] = r;
	ret = urel_group_new(j, layout, 1, ranks, j->size, j->rank, gp);
	free(ranks);
	return ret;
}

UREL_API int urel_group_free(struct urel_group *g)
{
	if (g) {
		free(g->ranks);
		free(g);
	}
	return 0;
}

UREL_API int urel_group_rank(const struct urel_group *g)
{
	return g ? g->rank : -EINVAL;
}

UREL_API int urel_group_size(const struct urel_group *g)
{
	return g ? g->size : -EINVAL;
}

UREL_API uint32_t urel_group_context(const struct urel_group *g)
{
	return g ? g->ctx : 0;
}

static urel_peer_t urel_group_peer(const struct urel_group *g, int rank)
{
	return rank == g->rank ? UREL_MSG_SELF : g->j->peers[g->ranks[rank]];
}

struct urel_ep *urel_group_ep(const struct urel_group *g)
{
	return g->j->m->ep;
}

struct urel_msg *urel_group_msg(const struct urel_group *g)
{
	return g->j->m;
}

urel_peer_t urel_group_peer_handle(const struct urel_group *g, int rank)
{
	return rank >= 0 && rank < g->size ? urel_group_peer(g, rank) : 0;
}

/* A send's bits: our rank as the source (not carried in the full layout). */
static int urel_group_send_bits(const struct urel_group *g, int tag, bool internal, uint64_t *b)
{
	return urel_tag_pack_raw(g->layout, g->ctx, g->layout == UREL_TAG_FULL ? 0 : g->rank, tag,
				 internal, b, NULL);
}

static int urel_group_send(struct urel_group *g, int dest, const void *buf, size_t len, int tag,
			   bool internal, unsigned int flags, struct urel_msg_req **reqp)
{
	uint64_t bits;
	int ret;

	if (dest < 0 || dest >= g->size)
		return -EINVAL;
	ret = urel_group_send_bits(g, tag, internal, &bits);
	if (ret)
		return ret;
	return urel_msg_isend(g->j->m, urel_group_peer(g, dest), buf, len, bits, flags, reqp);
}

static int urel_group_recv(struct urel_group *g, int src, void *buf, size_t len, int tag,
			   bool internal, struct urel_msg_req **reqp)
{
	urel_peer_t peer = UREL_MSG_ANY_PEER;
	uint64_t bits, ignore;
	int ret;

	if (src != UREL_ANY_SOURCE) {
		if (src < 0 || src >= g->size)
			return -EINVAL;
		peer = urel_group_peer(g, src);
	}
	ret = urel_tag_pack_raw(g->layout, g->ctx,
				g->layout == UREL_TAG_FULL ? UREL_ANY_SOURCE : src, tag, internal,
				&bits, &ignore);
	if (ret)
		return ret;
	return urel_msg_irecv(g->j->m, peer, buf, len, bits, ignore, reqp);
}

UREL_API int urel_group_isend(struct urel_group *g, int dest, const void *buf, size_t len, int tag,
			      unsigned int flags, struct urel_msg_req **reqp)
{
	if (!g || tag < 0)
		return -EINVAL;
	return urel_group_send(g, dest, buf, len, tag, false, flags, reqp);
}

UREL_API int urel_group_irecv(struct urel_group *g, int src, void *buf, size_t len, int tag,
			      struct urel_msg_req **reqp)
{
	if (!g)
		return -EINVAL;
	return urel_group_recv(g, src, buf, len, tag, false, reqp);
}

UREL_API int urel_group_source(const struct urel_group *g, const struct urel_msg_status *st,
			       int *src, int *tag)
{
	uint32_t ctx;
	int s, ret;

	if (!g || !st)
		return -EINVAL;
	ret = urel_tag_unpack(g->layout, st->tag, &ctx, &s, tag);
	if (ret)
		return ret;
	if (ctx != g->ctx)
		return -EINVAL;
	if (g->layout == UREL_TAG_FULL) {
		s = -1;
		for (int r = 0; r < g->size && s < 0; r++) {
			if (urel_group_peer(g, r) == st->peer)
				s = r;
		}
		if (s < 0)
			return -ENXIO;
	}
	if (src)
		*src = s;
	return 0;
}

/* This collective's internal tag: consecutive ones never share one in flight. */
static int urel_group_coll_tag(struct urel_group *g)
{
	return (int)(g->coll++ % ((uint32_t)g->lim.tag_max + 1));
}

UREL_API int urel_group_barrier(struct urel_group *g)
{
	struct urel_msg_req *reqs[2];
	int tag, ret = 0;

	if (!g)
		return -EINVAL;
	tag = urel_group_coll_tag(g);
	/* Dissemination: after round k every rank has heard from 2^(k+1) ranks. */
	for (int k = 1; k < g->size && !ret; k <<= 1) {
		ret = urel_group_recv(g, (g->rank - k + g->size) % g->size, NULL, 0, tag, true,
				      &reqs[0]);
		if (ret)
			break;
		ret = urel_group_send(g, (g->rank + k) % g->size, NULL, 0, tag, true, 0, &reqs[1]);
		if (ret) {
			urel_msg_cancel(reqs[0]);
			urel_msg_wait(reqs[0], NULL);
			break;
		}
		ret = urel_msg_waitall(2, reqs, NULL);
	}
	return ret;
}

UREL_API int urel_group_allgather(struct urel_group *g, const void *sendbuf, size_t len,
				  void *recvbuf)
{
	struct urel_msg_req **reqs;
	unsigned int n = 0;
	int tag, ret = 0;

	if (!g || (len && (!sendbuf || !recvbuf)))
		return -EINVAL;
	reqs = calloc(2 * (size_t)g->size, sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	tag = urel_group_coll_tag(g);
	if (len)
		memmove((char *)recvbuf + (size_t)g->rank * len, sendbuf, len);
	for (int r = 0; r < g->size && !ret; r++) {
		if (r == g->rank)
			continue;
		ret = urel_group_recv(g, r, (char *)recvbuf + (size_t)r * len, len, tag, true,
				      &reqs[n]);
		if (ret)
			break;
		n++;
		ret = urel_group_send(g, r, sendbuf, len, tag, true, 0, &reqs[n]);
		if (!ret)
			n++;
	}
	if (ret) {
		/* Take back what was posted: receives cancel, sends finish. */
		for (unsigned int i = 0; i < n; i++)
			urel_msg_cancel(reqs[i]);
		urel_msg_waitall(n, reqs, NULL);
	} else {
		ret = urel_msg_waitall(n, reqs, NULL);
	}
	free(reqs);
	return ret;
}

UREL_API int urel_group_dup(struct urel_group *g, struct urel_group **gp)
{
	uint32_t *next, ctx = 0;
	int ret;

	if (!g || !gp)
		return -EINVAL;
	next = calloc((size_t)g->size, sizeof(*next));
	if (!next)
		return -ENOMEM;
	ret = urel_group_allgather(g, &g->j->next_ctx, sizeof(*next), next);
	if (!ret) {
		/* Every member computes the same: the highest "lowest free" id. */
		for (int r = 0; r < g->size; r++)
			ctx = next[r] > ctx ? next[r] : ctx;
		ret = urel_group_new(g->j, g->layout, ctx, g->ranks, g->size, g->rank, gp);
		if (!ret)
			g->j->next_ctx = ctx + 1;
	}
	free(next);
	return ret;
}
