/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel windows: state shared by the files of lib/osc/.
 *
 * Wire (after the active-message header, whose op is one of UREL_OSC_*,
 * little-endian): struct urel_osc_wire, then the operand bytes. Requests
 * carry the origin's cookie, replies echo it. Accumulates and their
 * replies travel on the data channel (in order per origin and target, so
 * accumulates apply in the order they were issued); the rest on the
 * command channel. The lock word's swaps go on the data channel too, so
 * that a release follows the epoch's puts (rma.c).
 */
#ifndef UREL_OSC_OSC_H
#define UREL_OSC_OSC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <usnicrel_win.h>

#include "../am.h"
#include "../waker.h"

enum {
	UREL_OSC_ACC = 1, /* apply; ACC_ACK, with the old values if fetching */
	UREL_OSC_ACC_ACK,
	UREL_OSC_LOCK, /* lock_type; LOCK_ACK once granted */
	UREL_OSC_LOCK_ACK,
	UREL_OSC_UNLOCK, /* lock_type; UNLOCK_ACK */
	UREL_OSC_UNLOCK_ACK,
	UREL_OSC_POST, /* the target opened its exposure epoch to us */
	UREL_OSC_COMPLETE, /* the origin ended its access epoch to us */
	UREL_OSC_REGION, /* dynamic: which region holds [disp, disp + count)? REGION_ACK */
	UREL_OSC_REGION_ACK,
	UREL_OSC_PING, /* nothing: its acknowledgement (or its failure) says whether the peer lives
			*/
	UREL_OSC_LOCK_QUEUED, /* the lock waits; its piggy-backed operation is kept */
	UREL_OSC_LOCK_DISCARDED /* the lock waits; its piggy-backed operation was dropped */
};
#define UREL_OSC_F_FETCH (1U << 0)
#define UREL_OSC_F_CAS (1U << 1) /* operand bytes: compare, then the new value */
/*
 * LOCK: carries one accumulate (disp, count, type, op and the operand as
 * ACC), applied when the lock is granted. LOCK_ACK: it was applied, its
 * status in wire.base, its old values (F_FETCH) as the payload.
 */
#define UREL_OSC_F_PIGGY (1U << 2)
/* LOCK: release as soon as granted (an empty epoch); LOCK_ACK: it was. */
#define UREL_OSC_F_UNLOCK (1U << 3)
/* UNLOCK: of a lock held through the lock word, whose release found WAITERS set. */
#define UREL_OSC_F_WORD (1U << 4)
/* Operand bytes a lock request may carry. */
#define UREL_OSC_PIGGY_MAX 256
/*
 * Accumulates an origin keeps unanswered per target (UREL_WIN_ACC_CREDITS):
 * each ACC_ACK returns a credit, so a target holds at most this many of an
 * origin's requests and replies at a time.
 */
#define UREL_OSC_ACC_CREDITS 64
/* Default target-side budget of piggy-backed bytes kept with queued lock requests. */
#define UREL_OSC_LOCK_QUEUE_BYTES (64 * 1024)

struct urel_osc_wire {
	uint32_t win; /* the window's id (its private group's context id) */
	int32_t status; /* replies: 0 or a negative errno */
	uint64_t cookie;
	uint64_t disp; /* byte offset in the window (dynamic: the address) */
	uint64_t count; /* ACC: elements; REGION: bytes; REGION_ACK: region length */
	uint64_t rkey; /* REGION_ACK */
	uint64_t base; /* REGION_ACK: region start */
	uint8_t type, op, lock_type, pad[5];
};
_Static_assert(sizeof(struct urel_osc_wire) == 56, "osc wire");
#define UREL_OSC_HDR (sizeof(struct urel_am_hdr) + sizeof(struct urel_osc_wire))

/* --- Sync-type state machine (sync.c, pure) ------------------------------ */

enum urel_osc_sync_type {
	UREL_OSC_SYNC_NONE = 0,
	UREL_OSC_SYNC_LOCK,
	UREL_OSC_SYNC_LOCK_NO_CHECK,
	UREL_OSC_SYNC_LOCK_ALL,
	UREL_OSC_SYNC_LOCK_ALL_NO_CHECK,
	UREL_OSC_SYNC_PSCW,
	UREL_OSC_SYNC_FENCE,
	UREL_OSC_SYNC_FENCE_EPOCH
};

struct urel_osc_sync {
	enum urel_osc_sync_type type;
	unsigned int locks; /* LOCK*: targets locked */
	bool checked; /* LOCK: some lock was taken with a check */
	bool exposed; /* between post and wait/test */
	bool no_locks; /* UREL_WIN_NO_LOCKS: passive epochs are refused */
};

/*
 * Each returns 0 and moves @s, or UREL_WIN_ERR_SYNC and leaves it as it
 * was. @covered: the target is locked (LOCK) or in the access group (PSCW).
 * Lock and lock_all on a no_locks window: UREL_WIN_ERR_NOLOCKS, whatever the state.
 */
int urel_osc_sync_op(struct urel_osc_sync *s, bool covered);
int urel_osc_sync_fence(struct urel_osc_sync *s, unsigned int assert);
int urel_osc_sync_lock(struct urel_osc_sync *s, bool target_locked, bool nocheck);
int urel_osc_sync_unlock(struct urel_osc_sync *s, bool target_locked);
int urel_osc_sync_lock_all(struct urel_osc_sync *s, bool nocheck);
int urel_osc_sync_unlock_all(struct urel_osc_sync *s);
int urel_osc_sync_flush(const struct urel_osc_sync *s, bool covered);
int urel_osc_sync_start(struct urel_osc_sync *s);
int urel_osc_sync_complete(struct urel_osc_sync *s);
int urel_osc_sync_post(struct urel_osc_sync *s);
int urel_osc_sync_wait(struct urel_osc_sync *s);
int urel_osc_sync_free(const struct urel_osc_sync *s);

/* --- Target-side lock manager (lockmgr.c, pure) --------------------------- */

struct urel_osc_lockreq {
	struct urel_osc_lockreq *next;
	int type; /* UREL_WIN_LOCK_* */
	int origin; /* group rank */
	uint64_t cookie;
	void *grant; /* target.c: the LOCK_ACK to a remote origin, allocated with the request */
	/* target.c: a piggy-backed operation (wire, operand, room for its old values). */
	bool piggy, unlock_after, counted; /* counted: in the queue's budget */
	int op_status; /* the operation was refused when received */
	unsigned int op_flags;
	void *op_wire, *data, *old;
	size_t dlen;
};

struct urel_osc_lockmgr {
	uint64_t *word; /* the window's lock word (lockword.c), NULL: none */
	uint64_t reader_bit; /* our own rank's reader bit in it, 0: none (wide window) */
	bool by_bit; /* the shared lock we granted is held by reader_bit, not MANAGED */
	int type; /* 0 (free) or the type held */
	unsigned int shared; /* holders of a shared lock */
	struct urel_osc_lockreq *head, *tail; /* waiting, oldest first */
	unsigned int queued;
	size_t queued_bytes, budget; /* piggy-backed bytes kept with queued requests, their limit */
};

/* 1: granted now (@r not kept); 0: queued (@r kept until granted); -EINVAL: bad type. */
int urel_osc_lock_acquire(struct urel_osc_lockmgr *lm, struct urel_osc_lockreq *r);
/*
 * Release one hold of @type; the requests this grants come off the queue
 * into *@granted (a list, oldest first, the caller owns them). -EINVAL when
 * no such hold exists (nothing changes).
 */
int urel_osc_lock_release(struct urel_osc_lockmgr *lm, int type, struct urel_osc_lockreq **granted);
/*
 * Group rank @origin is gone: its waiting requests leave the queue (into
 * *@forgotten, the caller frees them) and what then fits at the head is
 * granted (into *@granted). The caller first releases what it held.
 */
void urel_osc_lock_forget(struct urel_osc_lockmgr *lm, int origin,
			  struct urel_osc_lockreq **forgotten, struct urel_osc_lockreq **granted);
/*
 * Group rank @origin held the lock word and released it to us (WAITERS
 * was set): the word passes to the queue's head (into *@granted).
 * -EINVAL when @origin did not hold it (nothing changes).
 */
int urel_osc_lock_handoff(struct urel_osc_lockmgr *lm, int origin,
			  struct urel_osc_lockreq **granted);
/*
 * Group rank @origin, the last reader through the lock word that WAITERS
 * marked, leaves: its bit comes out and the word passes to the queue's head
 * (into *@granted). -EINVAL when @origin holds no bit (nothing changes).
 */
int urel_osc_lock_readers_gone(struct urel_osc_lockmgr *lm, int origin,
			       struct urel_osc_lockreq **granted);
/* @origin died holding the lock word: taken back, the head granted; 0 when it did not hold it. */
int urel_osc_lock_reclaim(struct urel_osc_lockmgr *lm, int origin,
			  struct urel_osc_lockreq **granted);

/* --- Lock word (lockword.c, atomics on one word) ------------------------- */

#define UREL_OSC_LW_WAITERS (1ULL << 63)
#define UREL_OSC_LW_MANAGED (1ULL << 62)
#define UREL_OSC_LW_EXCL (1ULL << 61)
#define UREL_OSC_LW_OWNER(r) (UREL_OSC_LW_EXCL | (uint64_t)(r))
/* Shared holders through the word: one bit per group rank below UREL_OSC_LW_READERS_MAX. */
#define UREL_OSC_LW_READERS_MAX 61
#define UREL_OSC_LW_READERS (UREL_OSC_LW_EXCL - 1)
#define UREL_OSC_LW_READER(r) (1ULL << (r))

/* The group rank that holds @v exclusively through the word, or -1. */
int urel_osc_lw_owner(uint64_t v);
/* Held by nobody but readers (at least one) through the word, no mark. */
bool urel_osc_lw_readers_only(uint64_t v);
/* Group rank @r holds @v through the word, exclusively or shared. */
bool urel_osc_lw_holds(uint64_t v, int r);
/* Manager: add @bit to a word only readers hold (true), else false. */
bool urel_osc_lw_share(uint64_t *word, uint64_t bit);
/* Manager: take @bit out again. */
void urel_osc_lw_unshare(uint64_t *word, uint64_t bit);
/* Manager: mark WAITERS on a word readers hold, so that no reader joins and the last tells us. */
void urel_osc_lw_mark(uint64_t *word);
/* Manager: its queue emptied: readers may join again (an owner's mark stays: it tells us). */
void urel_osc_lw_unmark(uint64_t *word);
/*
 * Reader @bit leaving a word last seen as @seen: true and the value to swap
 * in (*@to), or false when it is the last one out of a marked word, which
 * leaves its bit in and tells the manager (urel_osc_lw_leave).
 */
bool urel_osc_lw_release_to(uint64_t seen, uint64_t bit, uint64_t *to);
/* Manager: reader @r told us it leaves: its bit out (the last: the word is ours); false: none. */
bool urel_osc_lw_leave(uint64_t *word, int r);
/* Manager: take the word (true), or mark WAITERS on the holders' (false). */
bool urel_osc_lw_take(uint64_t *word);
/* Manager: nothing it granted is held any more: free the word if it is ours (or a stale mark). */
void urel_osc_lw_drop(uint64_t *word);
/* Manager: OWNER(@owner)|WAITERS -> MANAGED; false when the word is not that. */
bool urel_osc_lw_handoff(uint64_t *word, int owner);
/* Manager: what @r holds through the word is taken back; false when it holds nothing. */
bool urel_osc_lw_reclaim(uint64_t *word, int r);

/* --- Accumulate engine (accop.c, pure) ----------------------------------- */

/* Element size of @type, 0 for an unknown one. */
size_t urel_osc_type_size(unsigned int type);
bool urel_osc_type_is_int(unsigned int type);
/* 0, -EINVAL (unknown op), UREL_WIN_ERR_TYPE (bitwise/logical op on a float type). */
int urel_osc_op_check(unsigned int type, unsigned int op, bool fetching);
/*
 * Apply @op elementwise: @target[i] = @target[i] op @operand[i], each
 * element one atomic read-modify-write; the values before go to @old (may
 * be NULL). @target is naturally aligned. CAS (@cas): @operand holds the
 * compare value then the new one (one element).
 */
void urel_osc_apply(void *target, const void *operand, void *old, size_t count, unsigned int type,
		    unsigned int op, bool cas);

/* --- Windows ------------------------------------------------------------- */

struct urel_osc_ctx;

/* A region of a dynamic window. */
struct urel_osc_region {
	struct urel_osc_region *next;
	uint64_t base, len, rkey;
	struct urel_mr *mr; /* local regions only */
};

/* What every rank publishes about its window at creation. */
struct urel_osc_info {
	uint64_t base, size, rkey;
	uint32_t disp_unit;
	uint32_t has_word; /* 1: a lock word at offset 0 of word_rkey (no_locks: 0) */
	uint64_t word_rkey;
};

/* A swap on a target's lock word: kept in the target's state, as its completion may come late. */
struct urel_osc_word_op {
	uint64_t compare, swap, old;
	bool done;
	int status;
};

/* Origin-side view of one target, and target-side counters of one origin. */
struct urel_osc_target {
	struct urel_osc_info info;
	urel_peer_t peer; /* 0: ourselves */
	unsigned int rdma_out; /* puts, gets and kernel atomics not yet completed */
	unsigned int unordered_out; /* of which gets and command-channel atomics: not ordered
				     * before a lock word release */
	unsigned int am_out; /* accumulates not yet acknowledged */
	int lock; /* held: UREL_WIN_LOCK_*, 0 */
	bool lock_nocheck;
	bool granted, unlocked; /* replies seen */
	bool unlocking; /* an unlock waits for its UNLOCK_ACK */
	bool lazy; /* locked but not yet requested: the first operation (or the unlock) asks */
	bool acquiring; /* a lazy lock asked for by one thread: the others' operations wait */
	int lock_status; /* the LOCK_ACK's status (a lazy lock's failure shows at its use) */
	int err; /* first failure of an operation to it, returned by the next call completing it */
	bool word; /* the lock is held through @target's lock word (fastlock.c) */
	uint64_t word_seen; /* shared through the word: its value when we last swapped it */
	bool word_unsure; /* a swap taking the word failed to complete here: it may land still */
	struct urel_osc_word_op wop; /* the swap in flight on it */
	/*
	 * Quiet puts (rma.c): counted once posted; @quiet_closed is the count
	 * an answered request on the data channel, posted later, covers. Below
	 * @quiet_posted: some wait for an answer after them (epoch.c asks).
	 */
	uint64_t quiet_posted, quiet_closed;
	bool piggy_applied; /* the LOCK_ACK says the piggy-backed operation was applied */
	int piggy_status;
	bool in_access; /* PSCW: in the start group */
	bool in_exposure; /* PSCW: in the post group */
	unsigned int posts; /* POSTs from this target not yet consumed by start */
	unsigned int completes; /* COMPLETEs from this origin not yet consumed by wait */
	int held; /* target side: the lock type this origin holds here, 0 */
	struct urel_osc_region *regions; /* dynamic: cached since the last sync call */
	bool region_done; /* REGION_ACK seen */
	struct urel_osc_region region_ack;
	int region_status;
};

/* A fetching accumulate awaiting its reply (the reply names it by id, never by pointer). */
struct urel_osc_fetch {
	struct urel_osc_fetch *next;
	struct urel_osc_fetch *rnext; /* in its request's list (request-based ones only) */
	uint64_t id;
	int target;
	void *result;
	size_t len;
	bool done;
	int status;
};

/*
 * A request-based operation: done when its RDMA pieces completed and its
 * fetches replied. Listed in its window until it ends; a window freed
 * first leaves it with its outcome (@w NULL), as MPI requests outlive windows.
 */
struct urel_win_req {
	struct urel_win *w;
	struct urel_win_req *next, *prev; /* in w->reqs */
	int target; /* -1 until something was issued */
	unsigned int rdma; /* RDMA pieces not yet completed */
	struct urel_osc_fetch *fetches; /* heap, listed in w->fetches until the request ends */
	int status; /* first failure */
};

struct urel_win {
	struct urel_osc_ctx *ctx;
	struct urel_win *next; /* in ctx->wins */
	struct urel_group *g; /* private: a dup of the creator's group */
	uint32_t id;
	enum urel_win_flavor flavor;
	int rank, size;
	void *base;
	size_t len;
	bool owns_base;
	struct urel_mr *mr;
	struct urel_osc_region *regions; /* dynamic: attached here */
	struct urel_osc_target *t; /* by group rank */
	struct urel_osc_sync sync;
	struct urel_osc_lockmgr lm; /* this rank as a target */
	struct urel_osc_fetch *fetches;
	struct urel_win_req *reqs; /* request-based operations not yet ended */
	uint64_t next_id;
	bool lazy_locks; /* UREL_WIN_LAZY_LOCK (default 1) */
	bool fast_locks; /* UREL_WIN_FAST_LOCK (default 1): locks on the lock word */
	bool fast_shared; /* UREL_WIN_FAST_SHARED (default 1): shared ones too */
	bool quiet_puts; /* UREL_WIN_QUIET_PUT (default 1): puts under a lock word answered later */
	struct urel_mr *word_mr; /* registration of lm.word */
	uint32_t flags; /* UREL_WIN_NO_LOCKS: lock requests here are refused */
};

struct urel_osc_ctx {
	struct urel_osc_ctx *next;
	struct urel_ep *ep;
	struct urel_msg *m;
	struct urel_device *dev;
	struct urel_am *am;
	unsigned int refs; /* 0: its last window is being freed, its pings drained */
	pthread_mutex_t lock; /* every window of the context */
	struct urel_win *wins;
	uint32_t max_am; /* bytes of an active message on the data channel */
	uint32_t max_rdma; /* bytes of one put or get */
	uint64_t dropped; /* malformed or stray messages */
	uint64_t deferred; /* requests left for a later try: no memory */
	uint64_t lock_piggy, lock_queued, lock_discarded; /* see struct urel_win_stats */
	uint64_t acc_waits; /* accumulates that waited for a credit */
	uint64_t locks_reclaimed; /* locks here released for origins that died */
	uint64_t lock_fast; /* locks taken on a target's lock word */
	uint64_t standbacks; /* the progress thread's, atomic (urel_msg_bg_stand_back()) */
	uint64_t last_watch_ms; /* holders last pinged (urel_osc_watch) */
	uint32_t acc_credits;
	/* Progress thread (UREL_OSC_PROGRESS_THREAD): serves targets that compute. */
	pthread_t thread;
	bool thread_on;
	bool stop; /* atomic: the thread ends */
	/*
	 * Per peer handle (the kernel's are small and dense), under lock:
	 * UREL_OSC_PEER_DEAD (a ping or an RDMA operation to it failed),
	 * UREL_OSC_PEER_PINGING (a ping of ours in flight). Indexed: a
	 * keepalive round over thousands of ranks looks each up once.
	 */
	uint8_t *peer_state;
	uint32_t peer_cap;
	unsigned int ndead, npinging;
	uint64_t gen; /* tells a ping's completion whether its context still exists */
	uint64_t last_ping_ms;
	uint32_t keepalive_ms;
	struct urel_waker waker; /* blocking calls asleep on the device (sleepers under lock) */
	uint32_t spin_us; /* UREL_OSC_SPIN_US: how long a blocking call polls before it sleeps */
};

/* ctx.c */
int urel_osc_ctx_get(struct urel_group *g, struct urel_osc_ctx **cp);
void urel_osc_ctx_put(struct urel_osc_ctx *c);
/* Start the progress thread unless it runs or is not wanted: a window here takes locks. */
int urel_osc_ctx_thread(struct urel_osc_ctx *c);
struct urel_win *urel_osc_find(struct urel_osc_ctx *c, uint32_t id);
/* Under c->lock, after a change a blocking call may wait for: wake the sleeping ones. */
void urel_osc_wake(struct urel_osc_ctx *c);
int urel_osc_rank_of(const struct urel_win *w, urel_peer_t peer);
int urel_osc_send(struct urel_osc_ctx *c, urel_peer_t peer, unsigned int chan, unsigned int op,
		  unsigned int flags, const struct urel_osc_wire *wire, const void *data,
		  size_t dlen);
/*
 * Which ranks a blocking call waits on: one group rank (>= 0), or all, or
 * the PSCW access or exposure group. Only their deaths fail the call: an
 * epoch whose targets live completes whoever else died.
 */
#define UREL_OSC_ALL (-1)
#define UREL_OSC_PSCW_ACCESS (-2)
#define UREL_OSC_PSCW_EXPOSURE (-3)
bool urel_osc_in_scope(const struct urel_win *w, int scope, int r);
/*
 * Progress until @done (called under c->lock) is true: 0, or
 * UREL_WIN_ERR_PEER when a rank of @scope it waits on died, or a failure.
 */
int urel_osc_wait_in(struct urel_win *w, int scope, bool (*done)(struct urel_win *w, void *arg),
		     void *arg);
/* urel_osc_wait_in() over every rank. */
int urel_osc_wait(struct urel_win *w, bool (*done)(struct urel_win *w, void *arg), void *arg);
/* urel_osc_wait_in() on what only @target answers. */
int urel_osc_wait_one(struct urel_win *w, int target, bool (*done)(struct urel_win *w, void *arg),
		      void *arg);
/* Errors of a completion that mean the peer is gone for good. */
bool urel_osc_peer_fatal(int err);
/* Remember that @peer died; under c->lock. */
void urel_osc_mark_dead(struct urel_osc_ctx *c, urel_peer_t peer);
bool urel_osc_is_dead(const struct urel_osc_ctx *c, urel_peer_t peer);
/* Some other member of @w is known dead (collectives over it would wait forever). */
bool urel_osc_any_dead(struct urel_win *w);
#define UREL_OSC_PEER_DEAD 0x1
#define UREL_OSC_PEER_PINGING 0x2

/* target.c: the target side of every message */
int urel_osc_on_am(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
		   const void *payload, size_t len);
/* Where @len bytes at @disp of this rank's window are, or an error; under c->lock. */
int urel_osc_local_range(struct urel_win *w, uint64_t disp, uint64_t len, void **p);
/*
 * Release this rank's hold of @type on its own window (a lock to self) and
 * send the grants that follows; called without c->lock.
 */
int urel_osc_self_unlock(struct urel_win *w, int type);
void urel_osc_watch(struct urel_osc_ctx *c);
void urel_osc_ping(struct urel_osc_ctx *c, uint32_t win, urel_peer_t peer);
uint64_t urel_osc_now_ms(void);
/* Request a lock of @type on our own window: 1 granted, 0 queued (granted later). */
int urel_osc_self_lock(struct urel_win *w, int type);

/* rma.c: post a compare-and-swap on @target's lock word; @op says its outcome. */
int urel_osc_word_cas(struct urel_win *w, int target, struct urel_osc_word_op *op);
/* rma.c, under c->lock: quiet puts to @t still wait for an answered request after them. */
bool urel_osc_quiet_open(const struct urel_osc_target *t);
/*
 * rma.c: when quiet puts to @target wait for an answered request after
 * them, post one that changes nothing (an add of 0 to its lock word).
 */
int urel_osc_quiet_close(struct urel_win *w, int target);
/*
 * rma.c, at the window's free (nothing in flight): requests not yet ended
 * keep their outcome and leave the window; their fetches are freed.
 */
void urel_osc_reqs_orphan(struct urel_win *w);

/* fastlock.c (under no lock) */
/* Under c->lock: the lock on @target may be taken through its lock word. */
bool urel_osc_word_eligible(const struct urel_win *w, int target);
/* 1: taken through the word; 0: held by another (ask the manager); or an error. */
int urel_osc_word_lock(struct urel_win *w, int target);
/* Release the word we hold (telling the manager if it queued requests); 0 or an error. */
int urel_osc_word_unlock(struct urel_win *w, int target);
/*
 * A lock whose swap on the word failed here (the wait, not the swap): wait
 * for the swap's outcome. 1: it landed, the lock is held through the word
 * (release it); 0: not held.
 */
int urel_osc_word_settle(struct urel_win *w, int target);
/* An empty epoch's turn in one swap: 0 done, 1 held by another, or an error. */
int urel_osc_word_epoch(struct urel_win *w, int target);

/* epoch.c */
/* Wait until every operation to @scope completed at its target; the first error. */
int urel_osc_flush_targets(struct urel_win *w, int scope);
/* Under c->lock: the first failure reported for @scope's targets, now cleared. */
int urel_osc_take_err(struct urel_win *w, int scope);
/*
 * A lazy lock on @target not yet requested: request it and wait for the
 * grant; one another thread requests: wait for that grant. 0 or the
 * lock's failure.
 */
int urel_osc_lazy_acquire(struct urel_win *w, int target);
/* Under c->lock: the lazy lock on @target is being requested by this caller (rma.c piggy). */
void urel_osc_acquiring(struct urel_win *w, int target);
/* Under c->lock: @target's lock is lazy and not yet requested. */
bool urel_osc_is_lazy(const struct urel_win *w, int target);
/* Under c->lock: lazy, and the first operation rides in the lock request (no lock word). */
bool urel_osc_piggy_first(const struct urel_win *w, int target);
void urel_osc_forget_regions(struct urel_win *w);

/* struct urel_win_stats of LIBUSNICREL_0.8 (win.c). */
struct urel_win_stats_v08 {
	uint64_t dropped, deferred;
	uint64_t lock_piggy, lock_queued, lock_discarded;
	uint64_t acc_waits;
	uint64_t locks_reclaimed;
	uint64_t lock_fast;
	uint64_t late_wakeups;
	uint64_t sleeps;
};

/* struct urel_win_stats up to LIBUSNICREL_0.7 (win.c). */
struct urel_win_stats_v06 {
	uint64_t dropped, deferred;
	uint64_t lock_piggy, lock_queued, lock_discarded;
	uint64_t acc_waits;
	uint64_t locks_reclaimed;
	uint64_t lock_fast;
	uint64_t late_wakeups;
};

/* struct urel_win_stats up to LIBUSNICREL_0.5. */
struct urel_win_stats_v05 {
	uint64_t dropped, deferred;
	uint64_t lock_piggy, lock_queued, lock_discarded;
	uint64_t acc_waits;
	uint64_t locks_reclaimed;
	uint64_t lock_fast;
};

/* struct urel_win_stats as LIBUSNICREL_0.3 and 0.4 had it. */
struct urel_win_stats_v03 {
	uint64_t dropped, deferred;
	uint64_t lock_piggy, lock_queued, lock_discarded;
	uint64_t acc_waits;
	uint64_t locks_reclaimed;
};

#endif /* UREL_OSC_OSC_H */
