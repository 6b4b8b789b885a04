// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the operations. Each is checked completely (epoch,
 * target, range, type) before it changes anything; then contiguous puts
 * and gets go to the kernel's RDMA, integer fetch-and-op (sum, replace,
 * no-op) and compare-and-swap of 4 or 8 bytes to the kernel's atomics, and
 * every other accumulate to the target's library as a message (in order on
 * the data channel). Operations on our own window are done in place.
 *
 * A put in a lock epoch held through the target's lock word is quiet
 * (UREL_POST_QUIET): the target's kernel answers it only on error, and
 * its next answer on the data channel, normally the word's release, says
 * it was applied. So lock, put and unlock cost five packets, not six. A
 * flush or unlock finding quiet puts with no answered request after them
 * posts one that changes nothing (urel_osc_quiet_close). Not in lock_all,
 * fence or PSCW epochs, which complete by flush: there it would cost a
 * packet. Request-based puts are answered by themselves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "osc.h"

/* An RDMA operation in flight: counted at its target until its completion. */
struct urel_osc_rdma {
	struct urel_request req;
	struct urel_win *w;
	int target;
	bool unordered; /* counted in unordered_out */
	bool word; /* a lock word swap: its caller reports its outcome */
	bool *done; /* fetching atomics: the caller waits on it */
	int *status;
	struct urel_win_req *wreq; /* request-based: counted there, its error reported there */
};

/* Where an operation goes, once checked. */
struct urel_osc_dest {
	struct urel_osc_target *t;
	bool self;
	uint64_t off; /* RDMA: byte offset in the registration; messages: the target's disp */
	uint64_t rkey;
	uint64_t addr; /* the target's address of the first byte (alignment checks) */
	bool data_chan; /* an atomic on the data channel (the lock word's) */
	bool defer; /* no doorbell: the word's release (or the next wait) rings it */
	bool quiet; /* a put answered by the next answer on the data channel */
	void *local; /* self: the bytes */
	struct urel_osc_sync next; /* the epoch state once the operation counts */
};

static void urel_osc_rdma_done(struct urel_request *req, const struct urel_completion *c)
{
	struct urel_osc_rdma *op = (struct urel_osc_rdma *)req;
	struct urel_win *w = op->w;
	struct urel_osc_target *t = &w->t[op->target];
	/* Reported by the request, the swap's caller or the fetch's waiter; else by a flush. */
	bool report = !op->wreq && !op->word && !op->done;

	pthread_mutex_lock(&w->ctx->lock);
	t->rdma_out--;
	t->unordered_out -= op->unordered;
	if (urel_osc_peer_fatal(c->status))
		urel_osc_mark_dead(w->ctx, t->peer);
	if (c->status && report && !t->err)
		t->err = urel_osc_peer_fatal(c->status) ? UREL_WIN_ERR_PEER : c->status;
	if (op->wreq) {
		op->wreq->rdma--;
		if (c->status && !op->wreq->status)
			op->wreq->status =
				urel_osc_peer_fatal(c->status) ? UREL_WIN_ERR_PEER : c->status;
	}
	if (op->done) {
		*op->status = c->status;
		*op->done = true;
	}
	urel_osc_wake(w->ctx);
	pthread_mutex_unlock(&w->ctx->lock);
	free(op);
}

static struct urel_osc_region *urel_osc_cached(struct urel_osc_target *t, uint64_t addr,
					       uint64_t len)
{
	for (struct urel_osc_region *r = t->regions; r; r = r->next) {
		if (addr >= r->base && addr - r->base < r->len)
			return r;
	}
	(void)len;
	return NULL;
}

static bool urel_osc_region_ready(struct urel_win *w, void *arg)
{
	return w->t[*(int *)arg].region_done;
}

/* Dynamic windows: the target's region holding @addr, learnt once per epoch; under c->lock. */
static int urel_osc_region_of(struct urel_win *w, int target, uint64_t addr, uint64_t len,
			      struct urel_osc_region **rp)
{
	struct urel_osc_target *t = &w->t[target];
	struct urel_osc_wire wi = { .win = w->id, .disp = addr, .count = len };
	struct urel_osc_region *r;
	int ret;

	r = urel_osc_cached(t, addr, len);
	if (r) {
		*rp = r;
		return 0;
	}
	t->region_done = false;
	pthread_mutex_unlock(&w->ctx->lock);
	ret = urel_osc_send(w->ctx, t->peer, UREL_CHAN_CMD, UREL_OSC_REGION, 0, &wi, NULL, 0);
	if (!ret)
		ret = urel_osc_wait_one(w, target, urel_osc_region_ready, &target);
	pthread_mutex_lock(&w->ctx->lock);
	if (ret)
		return ret;
	if (t->region_status)
		return t->region_status;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	*r = t->region_ack;
	r->mr = NULL;
	r->next = t->regions;
	t->regions = r;
	*rp = r;
	return 0;
}

/*
 * Check an operation of @len bytes at @disp of @target (under c->lock).
 * 1: nothing to do (null target, zero length); 0: *@d says where.
 */
static int urel_osc_check(struct urel_win *w, int target, uint64_t disp, uint64_t len,
			  struct urel_osc_dest *d)
{
	struct urel_osc_target *t;
	bool covered;
	int ret;

	memset(d, 0, sizeof(*d));
	d->next = w->sync;
	if (target == UREL_WIN_RANK_NULL) {
		/* Still only inside an epoch; it counts as an operation (opens a fence epoch). */
		return urel_osc_sync_op(&d->next, true) ? UREL_WIN_ERR_SYNC : 1;
	}
	if (target < 0 || target >= w->size)
		return -EINVAL;
	t = &w->t[target];
	covered = w->sync.type == UREL_OSC_SYNC_PSCW ? t->in_access : t->lock != 0;
	ret = urel_osc_sync_op(&d->next, covered);
	if (ret)
		return ret;
	if (target != w->rank && urel_osc_is_dead(w->ctx, t->peer))
		return UREL_WIN_ERR_PEER;
	if (!len)
		return 1;
	d->t = t;
	d->self = target == w->rank;
	if (w->flavor == UREL_WIN_FLAVOR_DYNAMIC) {
		struct urel_osc_region *r;

		if (disp + len < disp)
			return UREL_WIN_ERR_ATTACH;
		d->addr = disp;
		d->off = disp;
		if (d->self)
			return urel_osc_local_range(w, disp, len, &d->local);
		ret = urel_osc_region_of(w, target, disp, len, &r);
		if (ret)
			return ret;
		/* Outside the region or spanning two: no single registration holds it. */
		if (len > r->len || disp - r->base > r->len - len)
			return UREL_WIN_ERR_ATTACH;
		d->rkey = r->rkey;
		d->off = disp - r->base;
		return 0;
	}
	if (disp && t->info.disp_unit && disp > UINT64_MAX / t->info.disp_unit)
		return UREL_WIN_ERR_RANGE;
	d->off = disp * t->info.disp_unit;
	if (d->off > t->info.size || len > t->info.size - d->off)
		return UREL_WIN_ERR_RANGE;
	d->addr = t->info.base + d->off;
	d->rkey = t->info.rkey;
	if (d->self)
		d->local = (char *)w->base + d->off;
	return 0;
}

static bool urel_osc_retry(int ret)
{
	return ret == -EAGAIN || ret == -ENOBUFS;
}

/* Post one RDMA piece; counted before it can complete. */
static int urel_osc_post(struct urel_win *w, int target, int kind, void *buf, size_t len,
			 const struct urel_osc_dest *d, uint64_t off, const struct urel_atomic *at,
			 bool *done, int *status, struct urel_win_req *wreq)
{
	struct urel_osc_rdma *op = calloc(1, sizeof(*op));
	struct urel_osc_ctx *c = w->ctx;
	struct urel_osc_target *t = &w->t[target];
	/* Answered on the data channel: quiet puts posted before it complete with it. */
	bool answers =
		(kind == UREL_OP_PUT && !d->quiet) || (kind == UREL_OP_ATOMIC && d->data_chan);
	uint64_t covers;
	int ret;

	if (!op)
		return -ENOMEM;
	op->req.complete = urel_osc_rdma_done;
	op->w = w;
	op->target = target;
	op->done = done;
	op->status = status;
	op->wreq = wreq;
	/*
	 * The target's kernel applies a put, and an atomic on the data
	 * channel, as it delivers them: before a word release posted after
	 * them. A get's bytes are read when its answer leaves, an atomic on
	 * the command channel may pass the release: those must be answered
	 * before it.
	 */
	op->unordered = kind == UREL_OP_GET || (kind == UREL_OP_ATOMIC && !d->data_chan);
	op->word = d->data_chan;
	pthread_mutex_lock(&c->lock);
	t->rdma_out++;
	t->unordered_out += op->unordered;
	if (wreq) {
		wreq->rdma++;
		wreq->target = target;
	}
	/* Counted only once in the ring: what this one covers is behind it there. */
	covers = t->quiet_posted;
	pthread_mutex_unlock(&c->lock);
	for (;;) {
		if (kind == UREL_OP_PUT)
			ret = urel_ep_put(c->ep, d->t->peer, buf, len, d->rkey, off, &op->req,
					  (d->defer ? UREL_POST_MORE : 0) |
						  (d->quiet ? UREL_POST_QUIET : 0));
		else if (kind == UREL_OP_GET)
			ret = urel_ep_get(c->ep, d->t->peer, buf, len, d->rkey, off, &op->req, 0);
		else
			ret = urel_atomic_post(
				c->ep, d->data_chan ? USNIC_REL_CHAN_DATA : USNIC_REL_CHAN_CMD,
				d->t->peer, at, d->rkey, off, &op->req, 0);
		if (!urel_osc_retry(ret))
			break;
		if (urel_ep_progress(c->ep, 0) <= 0)
			urel_device_wait(c->dev, 1);
	}
	if (ret) {
		pthread_mutex_lock(&c->lock);
		t->rdma_out--;
		t->unordered_out -= op->unordered;
		if (wreq)
			wreq->rdma--;
		pthread_mutex_unlock(&c->lock);
		free(op);
		return ret;
	}
	if (d->quiet || answers) {
		pthread_mutex_lock(&c->lock);
		if (d->quiet)
			t->quiet_posted++;
		else if (covers > t->quiet_closed)
			t->quiet_closed = covers;
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

bool urel_osc_quiet_open(const struct urel_osc_target *t)
{
	return t->quiet_posted != t->quiet_closed;
}

int urel_osc_quiet_close(struct urel_win *w, int target)
{
	struct urel_osc_target *t = &w->t[target];
	struct urel_osc_dest d = { .t = t, .rkey = t->info.word_rkey, .data_chan = true };
	struct urel_atomic at = { .op = UREL_ATOMIC_FETCH_ADD, .size = 8 };
	bool open;

	pthread_mutex_lock(&w->ctx->lock);
	open = urel_osc_quiet_open(t);
	/* Dead: its kernel fails what it did not answer, nothing more will be. */
	if (open && urel_osc_is_dead(w->ctx, t->peer)) {
		t->quiet_closed = t->quiet_posted;
		open = false;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	/* Only puts under the word are quiet: it is there, and adding 0 changes nothing. */
	if (!open)
		return 0;
	return urel_osc_post(w, target, UREL_OP_ATOMIC, NULL, sizeof(uint64_t), &d, 0, &at, NULL,
			     NULL, NULL);
}

int urel_osc_word_cas(struct urel_win *w, int target, struct urel_osc_word_op *op)
{
	struct urel_osc_dest d = { .t = &w->t[target],
				   .rkey = w->t[target].info.word_rkey,
				   .data_chan = true };
	struct urel_atomic at = {
		.op = UREL_ATOMIC_CAS, .size = 8, .operand = op->swap, .compare = op->compare
	};

	at.result = &op->old;
	return urel_osc_post(w, target, UREL_OP_ATOMIC, NULL, sizeof(uint64_t), &d, 0, &at,
			     &op->done, &op->status, NULL);
}

/* Request-based operations: only in a passive-target epoch; under c->lock. */
static bool urel_osc_passive(const struct urel_win *w)
{
	return w->sync.type == UREL_OSC_SYNC_LOCK || w->sync.type == UREL_OSC_SYNC_LOCK_NO_CHECK ||
	       w->sync.type == UREL_OSC_SYNC_LOCK_ALL ||
	       w->sync.type == UREL_OSC_SYNC_LOCK_ALL_NO_CHECK;
}

static int urel_osc_rdma(struct urel_win *w, int kind, void *buf, size_t len, int target,
			 uint64_t disp, struct urel_win_req *wreq)
{
	struct urel_osc_dest d;
	int ret;

	if (!w || (len && !buf))
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	ret = wreq && !urel_osc_passive(w) ? UREL_WIN_ERR_SYNC
					   : urel_osc_check(w, target, disp, len, &d);
	if (ret >= 0)
		w->sync = d.next;
	if (!ret && d.self) {
		if (kind == UREL_OP_PUT)
			memmove(d.local, buf, len);
		else
			memmove(buf, d.local, len);
		ret = 1;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = urel_osc_lazy_acquire(w, target);
	if (ret)
		return ret;
	/*
	 * Under the word only the unlock or a flush completes it: one doorbell
	 * then for the put and the release, one kernel pass sending both.
	 */
	pthread_mutex_lock(&w->ctx->lock);
	d.defer = kind == UREL_OP_PUT && !wreq && w->t[target].word;
	/* Its release answers for it (rma.c's header). */
	d.quiet = d.defer && w->quiet_puts && w->sync.type == UREL_OSC_SYNC_LOCK;
	pthread_mutex_unlock(&w->ctx->lock);
	for (size_t done = 0; done < len;) {
		size_t n = len - done < w->ctx->max_rdma ? len - done : w->ctx->max_rdma;

		ret = urel_osc_post(w, target, kind, (char *)buf + done, n, &d, d.off + done, NULL,
				    NULL, NULL, wreq);
		if (ret)
			return ret;
		done += n;
	}
	return 0;
}

static int urel_osc_acc(struct urel_win *w, const void *buf, void *result, size_t count,
			unsigned int type, int target, uint64_t disp, unsigned int op,
			unsigned int flags, struct urel_win_req *wreq);

UREL_API int urel_win_put(struct urel_win *w, const void *buf, size_t len, int target,
			  uint64_t disp)
{
	bool lazy;

	if (w && buf && len && len <= UREL_OSC_PIGGY_MAX) {
		pthread_mutex_lock(&w->ctx->lock);
		lazy = urel_osc_piggy_first(w, target);
		pthread_mutex_unlock(&w->ctx->lock);
		/* The first operation of a lazy epoch: it may ride in the lock request. */
		if (lazy)
			return urel_osc_acc(w, buf, NULL, len, UREL_WIN_UINT8, target, disp,
					    UREL_WIN_REPLACE, 0, NULL);
	}
	return urel_osc_rdma(w, UREL_OP_PUT, (void *)buf, len, target, disp, NULL);
}

UREL_API int urel_win_get(struct urel_win *w, void *buf, size_t len, int target, uint64_t disp)
{
	return urel_osc_rdma(w, UREL_OP_GET, buf, len, target, disp, NULL);
}

static bool urel_osc_fetch_ready(struct urel_win *w, void *arg)
{
	(void)w;
	return ((struct urel_osc_fetch *)arg)->done;
}

static void urel_osc_fetch_unlist(struct urel_win *w, struct urel_osc_fetch *f)
{
	struct urel_osc_fetch **pp;

	pthread_mutex_lock(&w->ctx->lock);
	for (pp = &w->fetches; *pp && *pp != f; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = f->next;
	pthread_mutex_unlock(&w->ctx->lock);
}

static bool urel_osc_granted_one(struct urel_win *w, void *arg)
{
	return w->t[*(int *)arg].granted;
}

/* Accumulates to *@arg unanswered (non-fetching counted, fetching listed) below the credits. */
static bool urel_osc_has_credit(struct urel_win *w, void *arg)
{
	int target = *(int *)arg;
	unsigned int n = w->t[target].am_out;

	for (const struct urel_osc_fetch *f = w->fetches; f; f = f->next) {
		if (f->target == target && !f->done)
			n++;
	}
	return n < w->ctx->acc_credits;
}

/*
 * Flow control: wait (progressing) until @target answered enough of our
 * accumulates that one more fits in its credits. Several threads may each
 * pass with the last credit: the overshoot is at most one per thread.
 */
static int urel_osc_acc_credit(struct urel_win *w, int target)
{
	bool ok;

	pthread_mutex_lock(&w->ctx->lock);
	ok = urel_osc_has_credit(w, &target);
	pthread_mutex_unlock(&w->ctx->lock);
	if (ok)
		return 0;
	__atomic_fetch_add(&w->ctx->acc_waits, 1, __ATOMIC_RELAXED);
	return urel_osc_wait_one(w, target, urel_osc_has_credit, &target);
}

/* One accumulate message of @count elements; fetching ones wait for their reply. */
static int urel_osc_acc_msg(struct urel_win *w, int target, const struct urel_osc_dest *d,
			    uint64_t disp, const void *data, size_t dlen, size_t count,
			    unsigned int type, unsigned int op, unsigned int flags, void *result,
			    struct urel_win_req *wreq)
{
	struct urel_osc_wire wi = {
		.win = w->id, .disp = disp, .count = count, .type = (uint8_t)type, .op = (uint8_t)op
	};
	struct urel_osc_fetch local = { 0 }, *fp = &local;
	int ret;

	ret = urel_osc_acc_credit(w, target);
	if (ret)
		return ret;
	if (wreq && (flags & UREL_OSC_F_FETCH)) {
		/* The request's: on the heap until the request ends. */
		fp = calloc(1, sizeof(*fp));
		if (!fp)
			return -ENOMEM;
	}
	fp->target = target;
	fp->result = result;
	fp->len = count * urel_osc_type_size(type);
	pthread_mutex_lock(&w->ctx->lock);
	if (flags & UREL_OSC_F_FETCH) {
		fp->id = ++w->next_id;
		wi.cookie = fp->id;
		fp->next = w->fetches;
		w->fetches = fp;
		if (fp != &local) {
			fp->rnext = wreq->fetches;
			wreq->fetches = fp;
			wreq->target = target;
		}
	} else {
		d->t->am_out++;
	}
	pthread_mutex_unlock(&w->ctx->lock);
	ret = urel_osc_send(w->ctx, d->t->peer, UREL_CHAN_DATA, UREL_OSC_ACC, flags, &wi, data,
			    dlen);
	if (!(flags & UREL_OSC_F_FETCH)) {
		if (ret) {
			pthread_mutex_lock(&w->ctx->lock);
			d->t->am_out--;
			pthread_mutex_unlock(&w->ctx->lock);
		}
		return ret;
	}
	if (fp != &local) {
		/* The request ends it; a failed send fails the request at once. */
		if (ret) {
			pthread_mutex_lock(&w->ctx->lock);
			fp->done = true;
			fp->status = ret;
			pthread_mutex_unlock(&w->ctx->lock);
		}
		return ret;
	}
	if (!ret)
		ret = urel_osc_wait_one(w, target, urel_osc_fetch_ready, fp);
	urel_osc_fetch_unlist(w, fp);
	return ret ? ret : fp->status;
}

/*
 * The first operation of a lazy lock epoch rides in the lock request; the
 * target applies it once granted and answers with its result. 1: the lock
 * was not lazy or the target discarded the operation (granted now: send
 * it the usual way); else the operation's outcome.
 */
static int urel_osc_piggy(struct urel_win *w, int target, const struct urel_osc_dest *d,
			  uint64_t disp, const void *buf, size_t count, unsigned int type,
			  unsigned int op, unsigned int flags, void *result)
{
	struct urel_osc_target *t = d->t;
	size_t esz = urel_osc_type_size(type),
	       dlen = count * esz * (flags & UREL_OSC_F_CAS ? 2 : 1);
	struct urel_osc_wire wi = {
		.win = w->id, .disp = disp, .count = count, .type = (uint8_t)type, .op = (uint8_t)op
	};
	struct urel_osc_fetch f = { 0 };
	unsigned char zero[UREL_OSC_PIGGY_MAX] = { 0 };
	int ret;

	pthread_mutex_lock(&w->ctx->lock);
	if (!t->lazy) {
		pthread_mutex_unlock(&w->ctx->lock);
		/* Requested already (perhaps by another thread): once granted, sent as usual. */
		ret = urel_osc_lazy_acquire(w, target);
		return ret ? ret : 1;
	}
	urel_osc_acquiring(w, target);
	t->piggy_applied = false;
	wi.lock_type = (uint8_t)t->lock;
	if (flags & UREL_OSC_F_FETCH) {
		f.target = target;
		f.result = result;
		f.len = count * esz;
		f.id = ++w->next_id;
		f.next = w->fetches;
		w->fetches = &f;
	}
	wi.cookie = f.id;
	pthread_mutex_unlock(&w->ctx->lock);
	__atomic_fetch_add(&w->ctx->lock_piggy, 1, __ATOMIC_RELAXED);
	ret = urel_osc_send(w->ctx, t->peer, UREL_CHAN_CMD, UREL_OSC_LOCK, flags | UREL_OSC_F_PIGGY,
			    &wi, buf ? buf : zero, dlen);
	if (!ret)
		ret = urel_osc_wait_one(w, target, urel_osc_granted_one, &target);
	pthread_mutex_lock(&w->ctx->lock);
	t->acquiring = false;
	if (!ret)
		ret = t->lock_status;
	if (ret)
		t->lock_status = ret;
	else if (!t->piggy_applied)
		ret = 1; /* discarded: send it now */
	else
		ret = flags & UREL_OSC_F_FETCH ? (f.done ? f.status : -EPROTO) : t->piggy_status;
	pthread_mutex_unlock(&w->ctx->lock);
	if (flags & UREL_OSC_F_FETCH)
		urel_osc_fetch_unlist(w, &f);
	return ret;
}

static int urel_osc_acc(struct urel_win *w, const void *buf, void *result, size_t count,
			unsigned int type, int target, uint64_t disp, unsigned int op,
			unsigned int flags, struct urel_win_req *wreq)
{
	bool fetch = flags & UREL_OSC_F_FETCH, cas = flags & UREL_OSC_F_CAS, piggy;
	size_t esz = urel_osc_type_size(type), per;
	struct urel_osc_dest d;
	uint64_t base;
	int ret;

	if (!w || (count && ((!buf && op != UREL_WIN_NO_OP) || (fetch && !result))))
		return -EINVAL;
	ret = urel_osc_op_check(type, op, fetch);
	if (ret)
		return ret;
	if (count > SIZE_MAX / esz / 2)
		return UREL_WIN_ERR_RANGE;
	pthread_mutex_lock(&w->ctx->lock);
	ret = wreq && !urel_osc_passive(w) ? UREL_WIN_ERR_SYNC
					   : urel_osc_check(w, target, disp, count * esz, &d);
	if (!ret && d.addr % esz)
		ret = -EINVAL; /* an element not naturally aligned cannot be updated atomically */
	if (ret >= 0)
		w->sync = d.next;
	if (!ret && d.self) {
		/* NO_OP may come without an operand: read against zeros. */
		void *zero = buf ? NULL : calloc(count ? count : 1, esz);

		if (buf || zero) {
			urel_osc_apply(d.local, buf ? buf : zero, fetch ? result : NULL, count,
				       type, op, cas);
			ret = 1;
		} else {
			ret = -ENOMEM;
		}
		free(zero);
	}
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret < 0 ? ret : 0;
	/* Dynamic windows address the target by address, the others by byte offset. */
	base = w->flavor == UREL_WIN_FLAVOR_DYNAMIC ? d.addr : d.off;
	pthread_mutex_lock(&w->ctx->lock);
	piggy = !wreq && count * esz * (cas ? 2 : 1) <= UREL_OSC_PIGGY_MAX &&
		!(urel_osc_is_lazy(w, target) && urel_osc_word_eligible(w, target));
	pthread_mutex_unlock(&w->ctx->lock);
	/* A lock taken through the word goes first: the operation then needs no target process. */
	if (piggy) {
		ret = urel_osc_piggy(w, target, &d, base, buf, count, type, op, flags, result);
		if (ret != 1)
			return ret;
	} else {
		ret = urel_osc_lazy_acquire(w, target);
		if (ret)
			return ret;
	}
	per = (w->ctx->max_am - UREL_OSC_HDR) / esz / (cas ? 2 : 1);
	for (size_t done = 0; done < count;) {
		size_t n = count - done < per ? count - done : per;
		const void *src = buf ? (const char *)buf + done * esz : NULL;
		void *zero = NULL;

		if (!src) {
			/* NO_OP carries no operand: send zeros of the right length. */
			zero = calloc(n, esz);
			if (!zero)
				return -ENOMEM;
			src = zero;
		}
		ret = urel_osc_acc_msg(w, target, &d, base + done * esz, src,
				       n * esz * (cas ? 2 : 1), n, type, op, flags,
				       fetch ? (char *)result + done * esz : NULL, wreq);
		free(zero);
		if (ret)
			return ret;
		done += n;
	}
	return 0;
}

UREL_API int urel_win_accumulate(struct urel_win *w, const void *buf, size_t count,
				 enum urel_win_type type, int target, uint64_t disp,
				 enum urel_win_op op)
{
	return urel_osc_acc(w, buf, NULL, count, type, target, disp, op, 0, NULL);
}

UREL_API int urel_win_get_accumulate(struct urel_win *w, const void *buf, void *result,
				     size_t count, enum urel_win_type type, int target,
				     uint64_t disp, enum urel_win_op op)
{
	return urel_osc_acc(w, buf, result, count, type, target, disp, op, UREL_OSC_F_FETCH, NULL);
}

struct urel_osc_quiet {
	int target;
};

static bool urel_osc_am_quiet(struct urel_win *w, void *arg)
{
	return !w->t[((struct urel_osc_quiet *)arg)->target].am_out;
}

struct urel_osc_flag {
	bool done;
	int status;
};

static bool urel_osc_flag_set(struct urel_win *w, void *arg)
{
	(void)w;
	return ((struct urel_osc_flag *)arg)->done;
}

/*
 * The wait for @fl failed (its target died): the kernel completes the
 * operation all the same, at once for a peer it declared dead. Progress
 * until it did, unless the endpoint is gone (then nothing completes).
 */
static void urel_osc_flag_drain(struct urel_win *w, struct urel_osc_flag *fl)
{
	struct urel_osc_ctx *c = w->ctx;

	for (;;) {
		bool done;
		int n;

		pthread_mutex_lock(&c->lock);
		done = fl->done;
		pthread_mutex_unlock(&c->lock);
		if (done)
			return;
		n = urel_msg_progress(c->m);
		if (n < 0)
			return;
		if (!n)
			urel_device_wait(c->dev, 1);
	}
}

/*
 * A kernel atomic on a remote 4- or 8-byte integer; accumulates to that
 * target still in flight go first, as accumulate ordering requires.
 */
static int urel_osc_kernel_atomic(struct urel_win *w, int target, enum urel_atomic_op aop,
				  uint64_t operand, uint64_t compare, void *result, size_t esz,
				  uint64_t disp)
{
	struct urel_osc_quiet q = { .target = target };
	struct urel_osc_flag fl = { 0 };
	struct urel_atomic at = {
		.op = aop, .size = (unsigned int)esz, .operand = operand, .compare = compare
	};
	struct urel_osc_dest d;
	uint64_t old = 0;
	int ret;

	if (!w || !result)
		return -EINVAL;
	pthread_mutex_lock(&w->ctx->lock);
	ret = urel_osc_check(w, target, disp, esz, &d);
	if (!ret && d.addr % esz)
		ret = -EINVAL;
	if (ret >= 0)
		w->sync = d.next;
	pthread_mutex_unlock(&w->ctx->lock);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = urel_osc_lazy_acquire(w, target);
	if (ret)
		return ret;
	ret = urel_osc_wait_one(w, target, urel_osc_am_quiet, &q);
	if (ret)
		return ret;
	at.result = &old;
	ret = urel_osc_post(w, target, UREL_OP_ATOMIC, NULL, esz, &d, d.off, &at, &fl.done,
			    &fl.status, NULL);
	if (ret)
		return ret;
	ret = urel_osc_wait_one(w, target, urel_osc_flag_set, &fl);
	/* Its completion writes @fl and @old, on this stack: never return before it. */
	if (ret)
		urel_osc_flag_drain(w, &fl);
	else
		ret = fl.status;
	if (!ret)
		memcpy(result, &old, esz); /* little-endian: the low bytes */
	return ret;
}

/* The operand as the kernel takes it: 32-bit values zero-extended. */
static uint64_t urel_osc_operand(const void *p, size_t esz)
{
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, esz);
	return v;
}

/* The kernel's atomics apply: a remote 4/8-byte integer, and sum, replace or no-op. */
static bool urel_osc_kernel_fop(struct urel_win *w, int target, unsigned int type, unsigned int op)
{
	size_t esz = urel_osc_type_size(type);
	bool lazy;

	if (target < 0 || target >= w->size || target == w->rank)
		return false;
	pthread_mutex_lock(&w->ctx->lock);
	lazy = urel_osc_piggy_first(w, target);
	pthread_mutex_unlock(&w->ctx->lock);
	if (lazy)
		return false; /* the first operation of a lazy epoch rides in the lock request */
	if (!urel_osc_type_is_int(type) || (esz != 4 && esz != 8))
		return false;
	return op == UREL_WIN_SUM || op == UREL_WIN_REPLACE || op == UREL_WIN_NO_OP;
}

UREL_API int urel_win_fetch_and_op(struct urel_win *w, const void *operand, void *result,
				   enum urel_win_type type, int target, uint64_t disp,
				   enum urel_win_op op)
{
	size_t esz = urel_osc_type_size(type);
	int ret;

	if (!w || !result || (!operand && op != UREL_WIN_NO_OP))
		return -EINVAL;
	ret = urel_osc_op_check(type, op, true);
	if (ret)
		return ret;
	if (!urel_osc_kernel_fop(w, target, type, op))
		return urel_osc_acc(w, operand, result, 1, type, target, disp, op, UREL_OSC_F_FETCH,
				    NULL);
	return urel_osc_kernel_atomic(
		w, target, op == UREL_WIN_REPLACE ? UREL_ATOMIC_SWAP : UREL_ATOMIC_FETCH_ADD,
		op == UREL_WIN_NO_OP ? 0 : urel_osc_operand(operand, esz), 0, result, esz, disp);
}

UREL_API int urel_win_compare_and_swap(struct urel_win *w, const void *operand, const void *compare,
				       void *result, enum urel_win_type type, int target,
				       uint64_t disp)
{
	size_t esz = urel_osc_type_size(type);
	unsigned char both[16];

	if (!w || !operand || !compare || !result || !esz)
		return -EINVAL;
	if (!urel_osc_type_is_int(type))
		return UREL_WIN_ERR_TYPE;
	if (urel_osc_kernel_fop(w, target, type, UREL_WIN_SUM))
		return urel_osc_kernel_atomic(w, target, UREL_ATOMIC_CAS,
					      urel_osc_operand(operand, esz),
					      urel_osc_operand(compare, esz), result, esz, disp);
	memcpy(both, compare, esz);
	memcpy(both + esz, operand, esz);
	return urel_osc_acc(w, both, result, 1, type, target, disp, UREL_WIN_REPLACE,
			    UREL_OSC_F_FETCH | UREL_OSC_F_CAS, NULL);
}

/* --- Request-based operations -------------------------------------------- */

/* Every piece of @arg (a request) completed; under c->lock. */
static bool urel_osc_req_done(struct urel_win *w, void *arg)
{
	const struct urel_win_req *r = arg;

	(void)w;
	if (r->rdma)
		return false;
	for (const struct urel_osc_fetch *f = r->fetches; f; f = f->rnext) {
		if (!f->done)
			return false;
	}
	return true;
}

/*
 * Under c->lock: take @r out of its window (its fetches leave it and are
 * freed); its first error becomes r->status.
 */
static void urel_osc_req_unlist(struct urel_win_req *r)
{
	struct urel_win *w = r->w;

	while (r->fetches) {
		struct urel_osc_fetch *f = r->fetches, **pp;

		r->fetches = f->rnext;
		for (pp = &w->fetches; *pp && *pp != f; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = f->next;
		if (!r->status)
			r->status = f->done ? f->status : -ECANCELED;
		free(f);
	}
	if (r->prev)
		r->prev->next = r->next;
	else
		w->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->w = NULL;
}

/* End a completed request (or one its window's free left): the first error. */
static int urel_osc_req_end(struct urel_win_req *r)
{
	struct urel_win *w = r->w;
	int ret;

	if (w) {
		pthread_mutex_lock(&w->ctx->lock);
		urel_osc_req_unlist(r);
		pthread_mutex_unlock(&w->ctx->lock);
	}
	ret = r->status;
	free(r);
	return ret;
}

void urel_osc_reqs_orphan(struct urel_win *w)
{
	pthread_mutex_lock(&w->ctx->lock);
	while (w->reqs)
		urel_osc_req_unlist(w->reqs);
	pthread_mutex_unlock(&w->ctx->lock);
}

static struct urel_win_req *urel_osc_req_new(struct urel_win *w)
{
	struct urel_win_req *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->w = w;
	r->target = -1;
	pthread_mutex_lock(&w->ctx->lock);
	r->next = w->reqs;
	if (w->reqs)
		w->reqs->prev = r;
	w->reqs = r;
	pthread_mutex_unlock(&w->ctx->lock);
	return r;
}

/*
 * The operation was issued (@ret 0): hand the request out. It failed: wait
 * out the pieces already in flight (they point at the request), then free it.
 */
static int urel_osc_req_issued(struct urel_win_req *r, int ret, struct urel_win_req **reqp)
{
	if (!ret) {
		*reqp = r;
		return 0;
	}
	urel_win_req_wait(r);
	return ret;
}

UREL_API int urel_win_rput(struct urel_win *w, const void *buf, size_t len, int target,
			   uint64_t disp, struct urel_win_req **reqp)
{
	struct urel_win_req *r;

	if (!w || !reqp)
		return -EINVAL;
	r = urel_osc_req_new(w);
	if (!r)
		return -ENOMEM;
	return urel_osc_req_issued(
		r, urel_osc_rdma(w, UREL_OP_PUT, (void *)buf, len, target, disp, r), reqp);
}

UREL_API int urel_win_rget(struct urel_win *w, void *buf, size_t len, int target, uint64_t disp,
			   struct urel_win_req **reqp)
{
	struct urel_win_req *r;

	if (!w || !reqp)
		return -EINVAL;
	r = urel_osc_req_new(w);
	if (!r)
		return -ENOMEM;
	return urel_osc_req_issued(r, urel_osc_rdma(w, UREL_OP_GET, buf, len, target, disp, r),
				   reqp);
}

UREL_API int urel_win_raccumulate(struct urel_win *w, const void *buf, size_t count,
				  enum urel_win_type type, int target, uint64_t disp,
				  enum urel_win_op op, struct urel_win_req **reqp)
{
	struct urel_win_req *r;

	if (!w || !reqp)
		return -EINVAL;
	r = urel_osc_req_new(w);
	if (!r)
		return -ENOMEM;
	/* The operand is copied when sent: complete locally at once. */
	return urel_osc_req_issued(
		r, urel_osc_acc(w, buf, NULL, count, type, target, disp, op, 0, r), reqp);
}

UREL_API int urel_win_rget_accumulate(struct urel_win *w, const void *buf, void *result,
				      size_t count, enum urel_win_type type, int target,
				      uint64_t disp, enum urel_win_op op,
				      struct urel_win_req **reqp)
{
	struct urel_win_req *r;

	if (!w || !reqp)
		return -EINVAL;
	r = urel_osc_req_new(w);
	if (!r)
		return -ENOMEM;
	return urel_osc_req_issued(
		r, urel_osc_acc(w, buf, result, count, type, target, disp, op, UREL_OSC_F_FETCH, r),
		reqp);
}

UREL_API int urel_win_req_test(struct urel_win_req *req)
{
	bool done;
	int ret;

	if (!req)
		return -EINVAL;
	if (!req->w) {
		/* Its window was freed: everything it did completed then. */
		ret = urel_osc_req_end(req);
		return ret ? ret : 1;
	}
	urel_msg_progress(req->w->ctx->m);
	pthread_mutex_lock(&req->w->ctx->lock);
	done = urel_osc_req_done(req->w, req);
	pthread_mutex_unlock(&req->w->ctx->lock);
	if (!done)
		return 0;
	ret = urel_osc_req_end(req);
	return ret ? ret : 1;
}

/* The kernel completes every RDMA piece, if need be with an error (a dead peer: at once). */
static void urel_osc_req_drain(struct urel_win_req *r)
{
	struct urel_osc_ctx *c = r->w->ctx;

	for (;;) {
		bool busy;

		pthread_mutex_lock(&c->lock);
		busy = r->rdma != 0;
		pthread_mutex_unlock(&c->lock);
		if (!busy)
			return;
		if (urel_msg_progress(c->m) <= 0)
			urel_device_wait(c->dev, 1);
	}
}

UREL_API int urel_win_req_wait(struct urel_win_req *req)
{
	int ret, err;

	if (!req)
		return -EINVAL;
	if (!req->w)
		return urel_osc_req_end(req); /* its window was freed, and it with it */
	/* Only its target's death fails it. */
	ret = urel_osc_wait_in(req->w, req->target >= 0 ? req->target : UREL_OSC_ALL,
			       urel_osc_req_done, req);
	if (ret) {
		/* A dead target: its fetches will never be answered. */
		pthread_mutex_lock(&req->w->ctx->lock);
		for (struct urel_osc_fetch *f = req->fetches; f; f = f->rnext) {
			if (!f->done) {
				f->done = true;
				f->status = ret;
			}
		}
		pthread_mutex_unlock(&req->w->ctx->lock);
		urel_osc_req_drain(req);
	}
	err = urel_osc_req_end(req);
	return ret ? ret : err;
}
