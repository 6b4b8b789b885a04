/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: declarations private to the library.
 */
#ifndef USNICREL_INTERNAL_H
#define USNICREL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <uapi/usnic_rel.h>
#include <usnicrel.h>

#include "staging.h"

/* Marks the symbols the library exports; everything else stays hidden. */
#define UREL_API __attribute__((visibility("default")))

/*
 * Atomic encoding of the reserved RDMA fields (sqe.atomic.atomic_op values
 * follow enum usnic_rel_atomic_op of the wire format; the old value of an
 * atomic returns in cqe.imm; a get's data lands in the staging area at
 * sqe.staging_off). Agreed here until the ABI header spells it out.
 */
#define UREL_SQE_OPERAND_ADD_OR_COMPARE 0
#define UREL_SQE_OPERAND_SWAP 1

/* The public header mirrors the ABI's numbers; enums compared as ints. */
#define UREL_SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(UREL_SAME(UREL_CHAN_CMD, USNIC_REL_CHAN_CMD) &&
		       UREL_SAME(UREL_CHAN_DATA, USNIC_REL_CHAN_DATA) &&
		       UREL_SAME(UREL_NR_CHANS, USNIC_REL_NR_CHANS),
	       "channel numbers");
_Static_assert(UREL_INLINE_MAX == USNIC_REL_SQE_INLINE_MAX, "inline size");
_Static_assert(UREL_SAME(UREL_OP_SEND, USNIC_REL_OP_SEND) &&
		       UREL_SAME(UREL_OP_PUT, USNIC_REL_OP_PUT) &&
		       UREL_SAME(UREL_OP_GET, USNIC_REL_OP_GET) &&
		       UREL_SAME(UREL_OP_ATOMIC, USNIC_REL_OP_ATOMIC) &&
		       UREL_SAME(UREL_OP_RECV, USNIC_REL_OP_RECV),
	       "opcodes");
_Static_assert(UREL_ACCESS_LOCAL_WRITE == USNIC_REL_ACCESS_LOCAL_WRITE &&
		       UREL_ACCESS_REMOTE_READ == USNIC_REL_ACCESS_REMOTE_READ &&
		       UREL_ACCESS_REMOTE_WRITE == USNIC_REL_ACCESS_REMOTE_WRITE &&
		       UREL_ACCESS_REMOTE_ATOMIC == USNIC_REL_ACCESS_REMOTE_ATOMIC,
	       "access flags");

/* Completions taken from the ring per pass; the OFI MTL drains up to 100. */
#define UREL_CQ_BATCH 64

struct urel_device {
	int fd;
	unsigned int abi_version;
	pthread_mutex_t lock; /* the endpoint and registration lists */
	struct urel_ep *eps;
	struct urel_mr *mrs;
};

/* Userspace's view of one shared ring. */
struct urel_ring {
	void *mem;
	uint32_t *head;
	uint32_t *tail;
	uint32_t *flags; /* USNIC_REL_RING_F_*, written by the kernel */
	void *desc;
	uint32_t mask;
	uint32_t entries;
	uint32_t size; /* bytes mapped */
	uint32_t idx; /* our index: tail of a ring we produce, head of one we consume */
};

/* An operation posted and not yet completed: what its completion needs. */
struct urel_op {
	void *context;
	void *dest; /* get: where the bytes go; atomic: result, may be NULL */
	uint32_t staging_off;
	uint32_t staging_len; /* 0: nothing staged */
	uint32_t gen; /* checked against the completion's user_ctx */
	uint32_t next_free;
	uint8_t opcode;
	uint8_t size; /* atomic operand width */
	bool busy;
};

/* One chunk of the address vector: handles [i * 256, i * 256 + 256). */
#define UREL_AV_CHUNK 256
#define UREL_AV_CHUNKS 256
struct urel_av_chunk {
	uint8_t live[UREL_AV_CHUNK]; /* atomic: the handle is inserted */
};

struct urel_ep {
	struct urel_device *dev;
	struct urel_ep *next; /* in dev->eps */
	struct usnic_rel_create_ep info;
	struct sockaddr_storage addr;
	void *region[USNIC_REL_NR_REGIONS];

	/* Send side: both send rings, the staging area and the operation table. */
	pthread_mutex_t tx_lock;
	struct urel_ring sq[USNIC_REL_NR_CHANS];
	struct urel_staging staging;
	struct urel_op *ops;
	uint32_t ops_mask;
	uint32_t ops_free; /* head of the free list, UINT32_MAX when empty */
	int broken; /* atomic: the kernel refused the endpoint for good */

	/* Completion side. */
	pthread_mutex_t cq_lock;
	struct urel_ring cq;

	/* Receive buffers: the free ring and who holds each buffer. */
	pthread_mutex_t rx_lock;
	struct urel_ring rx_free;
	uint8_t *rx_user; /* atomic per buffer: 1 while the user holds it */

	pthread_mutex_t av_lock;
	struct urel_av_chunk *av[UREL_AV_CHUNKS]; /* atomic pointers */

	/*
	 * UREL_EP_SERIAL: the caller makes one call on the endpoint at a
	 * time, so tx_lock, cq_lock and rx_lock are not taken (av_lock is:
	 * peers are inserted off the data path). Set at creation only.
	 */
	bool serial;

	urel_recv_fn recv_fn; /* with recv_arg, under cq_lock */
	void *recv_arg;

	/*
	 * Dispatch: one thread at a time takes completions out of the ring and
	 * dispatches them, so they are dispatched in ring order. owner and
	 * depth are under cq_lock; the batch is the owner's alone, and a
	 * nested urel_ep_progress() from a callback continues it.
	 */
	pthread_cond_t prog_idle;
	pthread_t prog_owner;
	unsigned int prog_depth; /* 0 when no thread dispatches */
	unsigned int prog_waiters; /* threads waiting for the dispatcher to leave */
	unsigned int prog_epoch; /* dispatches ended (depth back to 0), wraps */
	unsigned int prog_head, prog_count;
	struct urel_completion prog_batch[UREL_CQ_BATCH];
	bool prog_parked; /* prog_again waits for the receive handler */
	struct urel_completion prog_again;
};

struct urel_mr {
	struct urel_device *dev;
	struct urel_mr *next; /* in dev->mrs */
	uint64_t rkey;
};

/* @m is one of @ep's tx_lock, cq_lock, rx_lock: skipped on a serial endpoint. */
static inline void urel_ep_lock(struct urel_ep *ep, pthread_mutex_t *m)
{
	if (!ep->serial)
		pthread_mutex_lock(m);
}

static inline void urel_ep_unlock(struct urel_ep *ep, pthread_mutex_t *m)
{
	if (!ep->serial)
		pthread_mutex_unlock(m);
}

static inline uint32_t urel_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void urel_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *urel_ring_slot(const struct urel_ring *r, uint32_t idx, size_t entry_size)
{
	return (char *)r->desc + (size_t)(idx & r->mask) * entry_size;
}

/*
 * Nothing to dispatch: no thread dispatching (its batch or parked receive
 * would be work), and the ring empty. Read without the lock, as a hint: a
 * completion that lands just after is found by the caller's next call, and
 * a sleep on the device fd wakes for it. A busy-poll loop mostly finds
 * this, and then pays no lock round trips.
 */
static inline bool urel_progress_idle(struct urel_ep *ep)
{
	/*
	 * The ring first: a thread that took our completion from it raised
	 * prog_depth before it moved cq.idx (released), so seeing the ring
	 * empty then the depth at 0 means its dispatch is over and visible,
	 * not under way (the caller would sleep with nobody to wake it).
	 */
	if (__atomic_load_n(&ep->cq.idx, __ATOMIC_ACQUIRE) != urel_load_acquire(ep->cq.tail))
		return false;
	return !__atomic_load_n(&ep->prog_depth, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&ep->prog_parked, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&ep->prog_head, __ATOMIC_RELAXED) ==
		       __atomic_load_n(&ep->prog_count, __ATOMIC_RELAXED);
}

/*
 * Nothing for urel_ep_progress() to do, not even a doorbell: idle, no send
 * left in a ring for the kernel, the endpoint not broken. A hint read
 * without locks (see urel_progress_idle()), for a layer's busy poll to
 * skip the call when it finds nothing, as it mostly does.
 */
static inline bool urel_ep_quiet(struct urel_ep *ep)
{
	if (!urel_progress_idle(ep) || __atomic_load_n(&ep->broken, __ATOMIC_RELAXED))
		return false;
	for (unsigned int chan = 0; chan < USNIC_REL_NR_CHANS; chan++) {
		if (urel_load_acquire(ep->sq[chan].tail) != urel_load_acquire(ep->sq[chan].head))
			return false;
	}
	return true;
}

/* addr.c */
int urel_addr_from_sockaddr(struct usnic_rel_addr *out, const struct sockaddr *sa, socklen_t len);
void urel_addr_to_sockaddr(struct sockaddr_storage *out, const struct usnic_rel_addr *a);

/* av.c */
bool urel_av_has(struct urel_ep *ep, urel_peer_t peer);
void urel_av_free(struct urel_ep *ep);

/* ops.c: the table of outstanding operations, under tx_lock. */
int urel_ops_init(struct urel_ep *ep, uint32_t entries);
void urel_ops_fini(struct urel_ep *ep);
struct urel_op *urel_op_alloc(struct urel_ep *ep, uint64_t *user_ctx);
struct urel_op *urel_op_find(struct urel_ep *ep, uint64_t user_ctx);
void urel_op_free(struct urel_ep *ep, struct urel_op *op);

/* sq.c: @pl NULL posts no payload (a get reserves staging for its result). */
struct urel_payload {
	const struct iovec *iov;
	unsigned int iovcnt;
};
int urel_sq_post(struct urel_ep *ep, unsigned int chan, struct usnic_rel_sqe *sqe,
		 const struct urel_payload *pl, void *context, void *dest, unsigned int flags);
int urel_sq_kick(struct urel_ep *ep);
int urel_sq_send_inline(struct urel_ep *ep, unsigned int chan, urel_peer_t peer, uint64_t imm,
			const void *hdr, size_t hlen, const void *data, size_t dlen, void *context);

/* rma.c: urel_ep_atomic() on channel @chan. */
int urel_atomic_post(struct urel_ep *ep, unsigned int chan, urel_peer_t peer,
		     const struct urel_atomic *op, uint64_t rkey, uint64_t remote_off,
		     void *context, unsigned int flags);
int urel_rx_kick(struct urel_ep *ep);

/* recv.c */
int urel_rx_post_all(struct urel_ep *ep);
bool urel_rx_claim(struct urel_ep *ep, uint32_t buf);

/* wait.c */
int urel_device_wait_fd(struct urel_device *dev, int fd, int timeout_ms);

/* device.c */
void urel_device_add_ep(struct urel_device *dev, struct urel_ep *ep);
void urel_device_remove_ep(struct urel_device *dev, struct urel_ep *ep);
void urel_device_add_mr(struct urel_device *dev, struct urel_mr *mr);
void urel_device_remove_mr(struct urel_device *dev, struct urel_mr *mr);

/* ep.c, mr.c: teardown without the device's list lock (device close) */
int urel_ep_teardown(struct urel_ep *ep);
int urel_mr_teardown(struct urel_mr *mr);

/* cq.c: taking completions, for the progress engine */
int urel_cq_take_locked(struct urel_ep *ep, struct usnic_rel_cqe *raw, uint32_t n);
void urel_cq_translate(struct urel_ep *ep, const struct usnic_rel_cqe *raw,
		       struct urel_completion *out, uint32_t n);

/* progress.c: the dispatch state of an endpoint. */
void urel_progress_init(struct urel_ep *ep);
void urel_progress_fini(struct urel_ep *ep);
void urel_progress_quiesce(struct urel_ep *ep);

#endif /* USNICREL_INTERNAL_H */
