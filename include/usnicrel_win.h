/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel one-sided windows: memory of every rank of a group that the
 * others read, write and update without the owner's involvement, in epochs
 * (fence, post/start/complete/wait, passive-target locks), on top of the
 * core's emulated RDMA (usnicrel.h) and the groups of usnicrel_msg.h.
 *
 * Put and get of contiguous bytes are RDMA operations the target's kernel
 * executes. Fetch-and-op (sum, replace, no-op) and compare-and-swap on 4-
 * and 8-byte integers are the kernel's remote atomics; every other
 * accumulate is applied by the target's library (its progress engine, also
 * driven by a progress thread per endpoint with windows that take locks, so
 * a target that computes still serves locks and accumulates;
 * UREL_OSC_PROGRESS_THREAD=0 turns it off) with CPU atomics, atomic per
 * element and against the kernel's atomics.
 *
 * A window moves through synchronisation states (MPI's): NONE, FENCE and
 * FENCE_EPOCH (after a fence; the epoch opens at the first operation),
 * LOCK / LOCK_NO_CHECK (per-target locks), LOCK_ALL / LOCK_ALL_NO_CHECK,
 * PSCW (an access epoch opened by start). An exposure epoch (post .. wait)
 * runs beside them. A call made in the wrong state returns
 * UREL_WIN_ERR_SYNC and changes nothing.
 *
 * Every function returns 0 (or a flag) on success and a negative errno.
 * See usnicrel_win(7).
 */
#ifndef USNICREL_WIN_H
#define USNICREL_WIN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <usnicrel_msg.h>

#ifdef __cplusplus
extern "C" {
#endif

struct urel_win;

/* Errors of the window calls, each distinct. */
#define UREL_WIN_ERR_SYNC (-EBADFD) /* not allowed in the window's epoch state */
#define UREL_WIN_ERR_RANGE (-ERANGE) /* target range outside the target's window */
#define UREL_WIN_ERR_ATTACH (-EFAULT) /* dynamic: no one attached region covers it */
#define UREL_WIN_ERR_FLAVOR (-EMEDIUMTYPE) /* not for this window's flavor */
#define UREL_WIN_ERR_TYPE (-EDOM) /* operation undefined on this datatype */
#define UREL_WIN_ERR_PEER (-EHOSTDOWN) /* a rank the call waits on died (its process is gone) */
#define UREL_WIN_ERR_NOLOCKS (-ENOLCK) /* a lock on a window created with UREL_WIN_NO_LOCKS */

/* A target rank that makes an operation complete at once, doing nothing (MPI_PROC_NULL). */
#define UREL_WIN_RANK_NULL (-2)

enum urel_win_flavor {
	UREL_WIN_FLAVOR_CREATE = 1,
	UREL_WIN_FLAVOR_ALLOCATE = 2,
	UREL_WIN_FLAVOR_DYNAMIC = 3
};

/* Element types of accumulates. */
enum urel_win_type {
	UREL_WIN_INT8 = 1,
	UREL_WIN_UINT8,
	UREL_WIN_INT16,
	UREL_WIN_UINT16,
	UREL_WIN_INT32,
	UREL_WIN_UINT32,
	UREL_WIN_INT64,
	UREL_WIN_UINT64,
	UREL_WIN_FLOAT,
	UREL_WIN_DOUBLE
};

/* Accumulate operations (MPI's predefined ones). */
enum urel_win_op {
	UREL_WIN_SUM = 1,
	UREL_WIN_PROD,
	UREL_WIN_MIN,
	UREL_WIN_MAX,
	UREL_WIN_BAND,
	UREL_WIN_BOR,
	UREL_WIN_BXOR,
	UREL_WIN_LAND,
	UREL_WIN_LOR,
	UREL_WIN_LXOR,
	UREL_WIN_REPLACE,
	UREL_WIN_NO_OP /* fetching forms only: read the target */
};

/* Lock types. */
#define UREL_WIN_LOCK_SHARED 1
#define UREL_WIN_LOCK_EXCLUSIVE 2

/* Assertions (MPI_MODE_*). */
#define UREL_WIN_MODE_NOCHECK (1U << 0)
#define UREL_WIN_MODE_NOSTORE (1U << 1)
#define UREL_WIN_MODE_NOPUT (1U << 2)
#define UREL_WIN_MODE_NOPRECEDE (1U << 3)
#define UREL_WIN_MODE_NOSUCCEED (1U << 4)

/* --- Windows (collective over the group) -------------------------------- */

/*
 * Expose @size bytes at @base (user memory, registered for remote access;
 * it must stay valid until urel_win_free()). Targets address it in units of
 * @disp_unit bytes (each rank its own).
 */
int urel_win_create(struct urel_group *g, void *base, size_t size, unsigned int disp_unit,
		    struct urel_win **wp);

/* As urel_win_create() over @size zeroed bytes of library memory (page aligned), in *@basep. */
int urel_win_allocate(struct urel_group *g, size_t size, unsigned int disp_unit, void **basep,
		      struct urel_win **wp);

/* A window without memory: regions are attached later; targets address them by address. */
int urel_win_create_dynamic(struct urel_group *g, struct urel_win **wp);

/* Dynamic windows only (else UREL_WIN_ERR_FLAVOR); local, not collective. */
int urel_win_attach(struct urel_win *w, void *base, size_t size);
int urel_win_detach(struct urel_win *w, const void *base);

/*
 * Free the window: only outside every epoch (else UREL_WIN_ERR_SYNC); waits
 * for every member, so nothing arrives at a freed window.
 */
int urel_win_free(struct urel_win *w);

enum urel_win_flavor urel_win_flavor(const struct urel_win *w);

/*
 * Creation attributes (since LIBUSNICREL_0.4). UREL_WIN_NO_LOCKS (MPI's
 * info key no_locks): this rank's window is never the target of a passive
 * lock, so it needs no lock manager and no progress thread; a lock request
 * that reaches it anyway fails at the origin with UREL_WIN_ERR_NOLOCKS, and
 * urel_win_lock() and urel_win_lock_all() on it are refused. Unknown flags
 * are refused (-EINVAL); zero is the default of the calls without _attr.
 */
#define UREL_WIN_NO_LOCKS (1U << 0)
struct urel_win_attr {
	uint32_t flags; /* UREL_WIN_NO_LOCKS */
};

int urel_win_create_attr(struct urel_group *g, void *base, size_t size, unsigned int disp_unit,
			 const struct urel_win_attr *attr, struct urel_win **wp);
int urel_win_allocate_attr(struct urel_group *g, size_t size, unsigned int disp_unit,
			   const struct urel_win_attr *attr, void **basep, struct urel_win **wp);
int urel_win_create_dynamic_attr(struct urel_group *g, const struct urel_win_attr *attr,
				 struct urel_win **wp);
/* The attributes @w was created with. */
int urel_win_query(const struct urel_win *w, struct urel_win_attr *attr);

/* Counters of the windows layer on @w's endpoint (all its windows). */
struct urel_win_stats {
	uint64_t dropped; /* malformed or stray window messages */
	uint64_t deferred; /* requests a target took later for lack of memory */
	/* Origin side, lazy locks (usnicrel_win(7)): operations sent inside a lock
	 * request, lock requests the target queued keeping the operation, and
	 * queued ones whose operation it discarded (sent again once granted). */
	uint64_t lock_piggy, lock_queued, lock_discarded;
	/* Accumulates that waited for a credit: the target had the origin's
	 * UREL_WIN_ACC_CREDITS (default 64) unanswered. */
	uint64_t acc_waits;
	/* Target side: locks released because the origin holding them died. */
	uint64_t locks_reclaimed;
	/* Origin side: exclusive locks taken on the target's lock word with the
	 * kernel's compare-and-swap, without its process (UREL_WIN_FAST_LOCK). */
	uint64_t lock_fast;
	/* Blocking calls that slept until their timeout although what they
	 * waited for had been served meanwhile (by another thread's progress):
	 * a wake-up lost. 0 unless the process is out of file descriptors. */
	uint64_t late_wakeups;
	/* Sleeps on the device of blocking window calls (flush, unlock, a
	 * fetching operation, a lock...): each costs a wake-up when its answer
	 * comes. Calls poll for UREL_OSC_SPIN_US first (usnicrel_win(7)). */
	uint64_t sleeps;
	/* Since LIBUSNICREL_0.9: the progress thread's sleeps instead of a
	 * pass, while the application made progress itself
	 * (UREL_PROGRESS_STANDBACK_US, usnicrel_win(7)). */
	uint64_t standbacks;
};
int urel_win_stats(const struct urel_win *w, struct urel_win_stats *st);

/* --- Operations ---------------------------------------------------------- */
/*
 * @target is a group rank or UREL_WIN_RANK_NULL; @disp counts the target's
 * displacement units (dynamic windows: the target address, in bytes).
 * Puts, gets and accumulates complete at the next flush, unlock, fence or
 * complete; the fetching forms return with their result in place.
 */
int urel_win_put(struct urel_win *w, const void *buf, size_t len, int target, uint64_t disp);
int urel_win_get(struct urel_win *w, void *buf, size_t len, int target, uint64_t disp);

int urel_win_accumulate(struct urel_win *w, const void *buf, size_t count, enum urel_win_type type,
			int target, uint64_t disp, enum urel_win_op op);

int urel_win_get_accumulate(struct urel_win *w, const void *buf, void *result, size_t count,
			    enum urel_win_type type, int target, uint64_t disp,
			    enum urel_win_op op);

int urel_win_fetch_and_op(struct urel_win *w, const void *operand, void *result,
			  enum urel_win_type type, int target, uint64_t disp, enum urel_win_op op);

/* Integer types only (else UREL_WIN_ERR_TYPE). */
int urel_win_compare_and_swap(struct urel_win *w, const void *operand, const void *compare,
			      void *result, enum urel_win_type type, int target, uint64_t disp);

/* --- Request-based operations ------------------------------------------- */
/*
 * As urel_win_put(), urel_win_get(), urel_win_accumulate() and
 * urel_win_get_accumulate(), in a passive-target epoch only (lock or
 * lock_all; else UREL_WIN_ERR_SYNC), each returning in *@reqp a request
 * that completes when the operation did locally (@buf may be reused, a
 * get's or fetch's result is in place). Flush, unlock and unlock_all
 * complete them at the target too; every request must still be tested to
 * completion or waited for, which frees it, before or after the window is
 * freed (a request outlives its window, as in MPI).
 */
struct urel_win_req;

int urel_win_rput(struct urel_win *w, const void *buf, size_t len, int target, uint64_t disp,
		  struct urel_win_req **reqp);
int urel_win_rget(struct urel_win *w, void *buf, size_t len, int target, uint64_t disp,
		  struct urel_win_req **reqp);
int urel_win_raccumulate(struct urel_win *w, const void *buf, size_t count, enum urel_win_type type,
			 int target, uint64_t disp, enum urel_win_op op,
			 struct urel_win_req **reqp);
int urel_win_rget_accumulate(struct urel_win *w, const void *buf, void *result, size_t count,
			     enum urel_win_type type, int target, uint64_t disp,
			     enum urel_win_op op, struct urel_win_req **reqp);
/* 1: complete (the request is freed), 0: not yet, or the operation's error (freed too). */
int urel_win_req_test(struct urel_win_req *req);
/* Wait for completion; frees the request; 0 or the operation's error. */
int urel_win_req_wait(struct urel_win_req *req);

/* --- Epochs -------------------------------------------------------------- */

int urel_win_fence(struct urel_win *w, unsigned int assert);

int urel_win_lock(struct urel_win *w, int lock_type, int target, unsigned int assert);
int urel_win_unlock(struct urel_win *w, int target);
int urel_win_lock_all(struct urel_win *w, unsigned int assert);
int urel_win_unlock_all(struct urel_win *w);

/* Passive epochs: complete the operations to @target (all targets) at the target. */
int urel_win_flush(struct urel_win *w, int target);
int urel_win_flush_all(struct urel_win *w);
int urel_win_flush_local(struct urel_win *w, int target);
int urel_win_flush_local_all(struct urel_win *w);

/* Exposure epoch to the @n group ranks in @ranks; wait or test ends it. */
int urel_win_post(struct urel_win *w, const int *ranks, int n, unsigned int assert);
/* Access epoch to the @n group ranks in @ranks (waits for their posts); complete ends it. */
int urel_win_start(struct urel_win *w, const int *ranks, int n, unsigned int assert);
int urel_win_complete(struct urel_win *w);
int urel_win_wait(struct urel_win *w);
/* 1 when the exposure epoch ended (as urel_win_wait()), 0 when not yet. */
int urel_win_test(struct urel_win *w);

#ifdef __cplusplus
}
#endif

#endif /* USNICREL_WIN_H */
