// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: creation (user memory, library memory, dynamic),
 * attach/detach and free. A window runs on a private duplicate of its
 * group, whose context id is also the window's id on the wire; it is
 * listed (and so reachable by messages) before the allgather of every
 * rank's base, size, key and displacement unit, so no origin can address
 * it before it exists. A failure at any rank fails the creation at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../group.h"
#include "../internal.h"
#include "osc.h"

#define UREL_OSC_ACCESS                                                                            \
	(UREL_ACCESS_LOCAL_WRITE | UREL_ACCESS_REMOTE_READ | UREL_ACCESS_REMOTE_WRITE |            \
	 UREL_ACCESS_REMOTE_ATOMIC)

struct urel_osc_pub {
	struct urel_osc_info info;
	int32_t status;
	uint32_t pad;
};

static void urel_osc_unlist(struct urel_win *w)
{
	struct urel_win **pp;

	pthread_mutex_lock(&w->ctx->lock);
	for (pp = &w->ctx->wins; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	pthread_mutex_unlock(&w->ctx->lock);
}

static void urel_osc_destroy(struct urel_win *w)
{
	urel_osc_unlist(w);
	urel_mr_dereg(w->word_mr);
	free(w->lm.word);
	urel_mr_dereg(w->mr);
	while (w->regions) {
		struct urel_osc_region *r = w->regions;

		w->regions = r->next;
		urel_mr_dereg(r->mr);
		free(r);
	}
	if (w->t) {
		urel_osc_forget_regions(w);
		free(w->t);
	}
	while (w->lm.head) {
		struct urel_osc_lockreq *r = w->lm.head;

		w->lm.head = r->next;
		free(r->grant);
		free(r->op_wire);
		free(r->data);
		free(r->old);
		free(r);
	}
	if (w->owns_base)
		free(w->base);
	urel_group_free(w->g);
	urel_osc_ctx_put(w->ctx);
	free(w);
}

static size_t urel_osc_env_size(const char *name, size_t dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtoull(v, &end, 0);
	return errno || *end ? dflt : (size_t)n;
}

/*
 * The lock word origins swap remotely (lockword.c), alone on its page: a
 * pinned page shared with other heap data would be pinned for them too.
 */
static void urel_osc_word_new(struct urel_win *w, struct urel_group *g)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = page > 0 ? (size_t)page : 4096;
	void *p = NULL;

	if (posix_memalign(&p, len, len))
		return;
	memset(p, 0, len);
	if (urel_mr_reg(urel_group_ep(g), p, sizeof(uint64_t),
			UREL_ACCESS_LOCAL_WRITE | UREL_ACCESS_REMOTE_ATOMIC, &w->word_mr)) {
		w->word_mr = NULL;
		free(p);
		return;
	}
	w->lm.word = p;
	/* Origins' reader bits exist only up to the limit: ours too. */
	if (w->size <= UREL_OSC_LW_READERS_MAX)
		w->lm.reader_bit = UREL_OSC_LW_READER(w->rank);
}

static int urel_osc_win_new(struct urel_group *g, enum urel_win_flavor flavor, void *base,
			    size_t size, unsigned int disp_unit, bool owns_base, uint32_t flags,
			    struct urel_win **wp)
{
	struct urel_osc_pub mine = { 0 }, *all = NULL;
	struct urel_win *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w) {
		if (owns_base)
			free(base);
		return -ENOMEM;
	}
	w->flavor = flavor;
	w->flags = flags;
	w->sync.no_locks = flags & UREL_WIN_NO_LOCKS;
	w->base = base;
	w->lm.budget = urel_osc_env_size("UREL_WIN_LOCK_QUEUE_BYTES", UREL_OSC_LOCK_QUEUE_BYTES);
	w->lazy_locks = urel_osc_env_size("UREL_WIN_LAZY_LOCK", 1) != 0;
	w->fast_locks = urel_osc_env_size("UREL_WIN_FAST_LOCK", 1) != 0;
	w->fast_shared = urel_osc_env_size("UREL_WIN_FAST_SHARED", 1) != 0;
	w->quiet_puts = urel_osc_env_size("UREL_WIN_QUIET_PUT", 1) != 0;
	w->len = size;
	w->owns_base = owns_base;
	ret = urel_osc_ctx_get(g, &w->ctx);
	if (ret) {
		w->ctx = NULL;
		if (owns_base)
			free(base);
		free(w);
		return ret;
	}
	/* Collective from here: every rank reaches the allgather whatever fails before. */
	ret = urel_group_dup(g, &w->g);
	if (ret) {
		w->g = NULL;
		urel_osc_destroy(w);
		return ret;
	}
	w->id = urel_group_context(w->g);
	w->rank = urel_group_rank(w->g);
	w->size = urel_group_size(w->g);
	w->t = calloc((size_t)w->size, sizeof(*w->t));
	all = calloc((size_t)w->size, sizeof(*all));
	if (!w->t || !all)
		mine.status = -ENOMEM;
	if (!mine.status && !(flags & UREL_WIN_NO_LOCKS))
		mine.status = urel_osc_ctx_thread(w->ctx);
	if (!mine.status && size)
		mine.status = urel_mr_reg(urel_group_ep(g), base, size, UREL_OSC_ACCESS, &w->mr);
	/* Optional: without a lock word (no memory, memlock limit) locks ask the manager. */
	if (!mine.status && !(flags & UREL_WIN_NO_LOCKS))
		urel_osc_word_new(w, g);
	/* Peers first: a message may arrive as soon as the window is listed. */
	for (int r = 0; w->t && r < w->size; r++) {
		w->t[r].peer = urel_group_peer_handle(w->g, r);
		w->t[r].region_done = true; /* no region lookup in flight */
	}
	mine.info.base = (uintptr_t)base;
	mine.info.size = size;
	mine.info.rkey = urel_mr_rkey(w->mr);
	mine.info.disp_unit = disp_unit;
	mine.info.has_word = w->word_mr != NULL;
	mine.info.word_rkey = urel_mr_rkey(w->word_mr);
	if (w->t) {
		pthread_mutex_lock(&w->ctx->lock);
		w->next = w->ctx->wins;
		w->ctx->wins = w;
		pthread_mutex_unlock(&w->ctx->lock);
	}
	if (all) {
		ret = urel_group_allgather(w->g, &mine, sizeof(mine), all);
	} else {
		/* Without room for the answers we still take part, over a scratch buffer. */
		struct urel_osc_pub *tmp = calloc((size_t)w->size, sizeof(*tmp));

		ret = tmp ? urel_group_allgather(w->g, &mine, sizeof(mine), tmp) : -ENOMEM;
		free(tmp);
		ret = ret ? ret : -ENOMEM;
	}
	for (int r = 0; !ret && r < w->size; r++) {
		if (all[r].status)
			ret = all[r].status;
	}
	if (ret) {
		free(all);
		urel_osc_destroy(w);
		return ret;
	}
	pthread_mutex_lock(&w->ctx->lock);
	for (int r = 0; r < w->size; r++)
		w->t[r].info = all[r].info;
	pthread_mutex_unlock(&w->ctx->lock);
	free(all);
	*wp = w;
	return 0;
}

/* The flags of @attr (NULL: none), or -EINVAL for one this library does not know. */
static int64_t urel_osc_attr_flags(const struct urel_win_attr *attr)
{
	if (!attr)
		return 0;
	return attr->flags & ~UREL_WIN_NO_LOCKS ? -EINVAL : (int64_t)attr->flags;
}

UREL_API int urel_win_create_attr(struct urel_group *g, void *base, size_t size,
				  unsigned int disp_unit, const struct urel_win_attr *attr,
				  struct urel_win **wp)
{
	int64_t flags = urel_osc_attr_flags(attr);

	if (!g || !wp || !disp_unit || (size && !base) || flags < 0)
		return -EINVAL;
	return urel_osc_win_new(g, UREL_WIN_FLAVOR_CREATE, base, size, disp_unit, false,
				(uint32_t)flags, wp);
}

UREL_API int urel_win_create(struct urel_group *g, void *base, size_t size, unsigned int disp_unit,
			     struct urel_win **wp)
{
	return urel_win_create_attr(g, base, size, disp_unit, NULL, wp);
}

UREL_API int urel_win_allocate_attr(struct urel_group *g, size_t size, unsigned int disp_unit,
				    const struct urel_win_attr *attr, void **basep,
				    struct urel_win **wp)
{
	int64_t flags = urel_osc_attr_flags(attr);
	long page = sysconf(_SC_PAGESIZE);
	void *base = NULL;
	int ret;

	if (!g || !wp || !basep || !disp_unit || flags < 0)
		return -EINVAL;
	if (size) {
		ret = posix_memalign(&base, page > 0 ? (size_t)page : 4096, size);
		if (ret)
			return -ret;
		memset(base, 0, size);
	}
	ret = urel_osc_win_new(g, UREL_WIN_FLAVOR_ALLOCATE, base, size, disp_unit, true,
			       (uint32_t)flags, wp);
	if (!ret)
		*basep = base;
	return ret;
}

UREL_API int urel_win_allocate(struct urel_group *g, size_t size, unsigned int disp_unit,
			       void **basep, struct urel_win **wp)
{
	return urel_win_allocate_attr(g, size, disp_unit, NULL, basep, wp);
}

UREL_API int urel_win_create_dynamic_attr(struct urel_group *g, const struct urel_win_attr *attr,
					  struct urel_win **wp)
{
	int64_t flags = urel_osc_attr_flags(attr);

	if (!g || !wp || flags < 0)
		return -EINVAL;
	return urel_osc_win_new(g, UREL_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, false, (uint32_t)flags, wp);
}

UREL_API int urel_win_create_dynamic(struct urel_group *g, struct urel_win **wp)
{
	return urel_win_create_dynamic_attr(g, NULL, wp);
}

UREL_API int urel_win_query(const struct urel_win *w, struct urel_win_attr *attr)
{
	if (!w || !attr)
		return -EINVAL;
	attr->flags = w->flags;
	return 0;
}

UREL_API int urel_win_attach(struct urel_win *w, void *base, size_t size)
{
	struct urel_osc_region *r;
	uintptr_t b = (uintptr_t)base;
	int ret;

	if (!w || !base || !size || b + size < b)
		return -EINVAL;
	if (w->flavor != UREL_WIN_FLAVOR_DYNAMIC)
		return UREL_WIN_ERR_FLAVOR;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = urel_mr_reg(w->ctx->ep, base, size, UREL_OSC_ACCESS, &r->mr);
	if (ret) {
		free(r);
		return ret;
	}
	r->base = b;
	r->len = size;
	r->rkey = urel_mr_rkey(r->mr);
	pthread_mutex_lock(&w->ctx->lock);
	for (struct urel_osc_region *o = w->regions; o; o = o->next) {
		if (b < o->base + o->len && o->base < b + size)
			ret = -EEXIST; /* overlapping regions: an access could span both */
	}
	if (!ret) {
		r->next = w->regions;
		w->regions = r;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret) {
		urel_mr_dereg(r->mr);
		free(r);
	}
	return ret;
}

UREL_API int urel_win_detach(struct urel_win *w, const void *base)
{
	struct urel_osc_region **pp, *r = NULL;

	if (!w || !base)
		return -EINVAL;
	if (w->flavor != UREL_WIN_FLAVOR_DYNAMIC)
		return UREL_WIN_ERR_FLAVOR;
	pthread_mutex_lock(&w->ctx->lock);
	for (pp = &w->regions; *pp; pp = &(*pp)->next) {
		if ((*pp)->base == (uintptr_t)base) {
			r = *pp;
			*pp = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (!r)
		return UREL_WIN_ERR_ATTACH;
	urel_mr_dereg(r->mr);
	free(r);
	return 0;
}

/*
 * Progress until every RDMA piece of @w has completed: their completions
 * write into @w (its targets' counts, a lock word swap's outcome). A wait
 * that ended early at a dead peer left its pieces in flight; the kernel
 * fails every one of them (it declared the peer dead), but only later.
 */
static void urel_osc_drain_rdma(struct urel_win *w)
{
	bool busy = true;
	int n;

	if (urel_ep_flush(w->ctx->ep) < 0)
		return;
	for (;;) {
		pthread_mutex_lock(&w->ctx->lock);
		busy = false;
		for (int r = 0; r < w->size && !busy; r++)
			busy = w->t[r].rdma_out != 0;
		pthread_mutex_unlock(&w->ctx->lock);
		if (!busy)
			return;
		n = urel_msg_progress(w->ctx->m);
		if (n < 0)
			return; /* the endpoint is gone: nothing more completes */
		if (!n)
			urel_device_wait(w->ctx->dev, 10);
	}
}

UREL_API int urel_win_free(struct urel_win *w)
{
	int ret;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	ret = urel_osc_sync_free(&w->sync);
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret;
	/* Every member has finished every epoch once all reach this barrier. */
	ret = urel_osc_flush_targets(w, UREL_OSC_ALL);
	/* A dead member never reaches the barrier: free locally. */
	if (!ret && urel_osc_any_dead(w))
		ret = UREL_WIN_ERR_PEER;
	if (!ret)
		ret = urel_group_barrier(w->g);
	urel_osc_drain_rdma(w);
	urel_osc_reqs_orphan(w);
	urel_osc_destroy(w);
	return ret;
}

UREL_API int urel_win_stats_v09(const struct urel_win *w, struct urel_win_stats *st);
UREL_API int urel_win_stats_v08(const struct urel_win *w, struct urel_win_stats_v08 *st);
UREL_API int urel_win_stats_v06(const struct urel_win *w, struct urel_win_stats_v06 *st);
UREL_API int urel_win_stats_v05(const struct urel_win *w, struct urel_win_stats_v05 *st);
UREL_API int urel_win_stats_v03(const struct urel_win *w, struct urel_win_stats_v03 *st);

/*
 * LIBUSNICREL_0.5 added lock_fast at the end of struct urel_win_stats,
 * LIBUSNICREL_0.6 late_wakeups, LIBUSNICREL_0.8 sleeps, LIBUSNICREL_0.9 standbacks.
 */
__asm__(".symver urel_win_stats_v09, urel_win_stats@@LIBUSNICREL_0.9");
UREL_API int urel_win_stats_v09(const struct urel_win *w, struct urel_win_stats *st)
{
	if (!w || !st)
		return -EINVAL;
	st->dropped = __atomic_load_n(&w->ctx->dropped, __ATOMIC_RELAXED);
	st->deferred = __atomic_load_n(&w->ctx->deferred, __ATOMIC_RELAXED);
	st->lock_piggy = __atomic_load_n(&w->ctx->lock_piggy, __ATOMIC_RELAXED);
	st->lock_queued = __atomic_load_n(&w->ctx->lock_queued, __ATOMIC_RELAXED);
	st->lock_discarded = __atomic_load_n(&w->ctx->lock_discarded, __ATOMIC_RELAXED);
	st->acc_waits = __atomic_load_n(&w->ctx->acc_waits, __ATOMIC_RELAXED);
	st->locks_reclaimed = __atomic_load_n(&w->ctx->locks_reclaimed, __ATOMIC_RELAXED);
	st->lock_fast = __atomic_load_n(&w->ctx->lock_fast, __ATOMIC_RELAXED);
	st->late_wakeups = __atomic_load_n(&w->ctx->waker.late_wakeups, __ATOMIC_RELAXED);
	st->sleeps = __atomic_load_n(&w->ctx->waker.sleeps, __ATOMIC_RELAXED);
	st->standbacks = __atomic_load_n(&w->ctx->standbacks, __ATOMIC_RELAXED);
	return 0;
}

/* An older version's struct is a prefix of today's: fill only @size bytes. */
static int urel_win_stats_prefix(const struct urel_win *w, void *st, size_t size)
{
	struct urel_win_stats all;
	int ret;

	if (!st)
		return -EINVAL;
	ret = urel_win_stats_v09(w, &all);
	if (!ret)
		memcpy(st, &all, size);
	return ret;
}

/* Programs linked against 0.8 pass the struct without standbacks. */
__asm__(".symver urel_win_stats_v08, urel_win_stats@LIBUSNICREL_0.8");
UREL_API int urel_win_stats_v08(const struct urel_win *w, struct urel_win_stats_v08 *st)
{
	return urel_win_stats_prefix(w, st, sizeof(*st));
}

/* Programs linked against 0.6 or 0.7 pass the struct without sleeps. */
__asm__(".symver urel_win_stats_v06, urel_win_stats@LIBUSNICREL_0.6");
UREL_API int urel_win_stats_v06(const struct urel_win *w, struct urel_win_stats_v06 *st)
{
	return urel_win_stats_prefix(w, st, sizeof(*st));
}

/* Programs linked against 0.5 pass the struct without late_wakeups. */
__asm__(".symver urel_win_stats_v05, urel_win_stats@LIBUSNICREL_0.5");
UREL_API int urel_win_stats_v05(const struct urel_win *w, struct urel_win_stats_v05 *st)
{
	return urel_win_stats_prefix(w, st, sizeof(*st));
}

/* Programs linked before 0.5 pass the shorter struct: fill only that much. */
__asm__(".symver urel_win_stats_v03, urel_win_stats@LIBUSNICREL_0.3");
UREL_API int urel_win_stats_v03(const struct urel_win *w, struct urel_win_stats_v03 *st)
{
	return urel_win_stats_prefix(w, st, sizeof(*st));
}

UREL_API enum urel_win_flavor urel_win_flavor(const struct urel_win *w)
{
	return w ? w->flavor : 0;
}
