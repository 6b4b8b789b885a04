/* SPDX-License-Identifier: MIT */
/*
 * urel: a libfabric provider on libusnicrel. An RDM endpoint is one usnic_rel
 * endpoint with a tagged-messaging context (usnicrel_msg.h) on it; libfabric's
 * untagged messages ride in the same context under a reserved match bit.
 * Progress is manual: reading a CQ progresses the endpoints bound to it.
 * RMA and atomics are the library's emulated RDMA (urel_ep_put/get/atomic):
 * a domain's registrations belong to one library endpoint, its first
 * endpoint's (see domain.c), and remote addresses are offsets in them.
 *
 * Locks: an endpoint's lock is taken before a CQ's and the domain's, never the other way
 * round; the library's own locks are innermost (it never calls back here). The
 * endpoints' and CQs' locks are skipped where the domain's threading level
 * says the application serializes the calls that would contend for them
 * (urel_fi_threading_locks() in domain.c).
 */
#ifndef UREL_FI_H
#define UREL_FI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <usnicrel.h>
#include <usnicrel_msg.h>

#define UREL_FI_NAME "urel"
#define UREL_FI_VERSION FI_VERSION(0, 1)
#define UREL_FI_API FI_VERSION(1, 17)

/*
 * With FI_MSG enabled, untagged messages carry this match bit and tagged ones
 * must leave it clear, so a tagged receive never takes an untagged message.
 */
#define UREL_FI_UNTAGGED_BIT (1ULL << 63)
/*
 * The notice of a write with remote CQ data (rma.c) is a message under these
 * bits: no application receive takes it, untagged ones match the untagged
 * bit alone and tagged ones never have it. Endpoints with FI_RMA reserve the
 * bit even without FI_MSG.
 */
#define UREL_FI_NOTE_BITS (UREL_FI_UNTAGGED_BIT | 1)
#define UREL_FI_RESERVES_TOP_BIT(caps) (((caps) & (FI_MSG | FI_RMA)) != 0)

/* fi_inject() copies the bytes; larger sends use the caller's buffer. */
#define UREL_FI_INJECT_SIZE 256
/* Operations outstanding per endpoint and direction (FI_RM_ENABLED: -FI_EAGAIN past it). */
#define UREL_FI_QUEUE_SIZE 4096
/* Finished operations an endpoint keeps for reuse (xfer.c). */
#define UREL_FI_SPARE_OPS 64
/* Endpoints bound to one CQ. */
#define UREL_FI_CQ_EPS 16
/* iovs of one send, receive or local side of an RMA, and remote iovs of an RMA (iov.c). */
#define UREL_FI_IOV_LIMIT 8

/* One-sided capabilities: the primary ones and the four they imply. */
#define UREL_FI_RMA_PRIMARY (FI_RMA | FI_ATOMIC)
#define UREL_FI_RMA_SECONDARY (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define UREL_FI_CAPS                                                                               \
	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE | FI_LOCAL_COMM |   \
	 FI_REMOTE_COMM | FI_REMOTE_CQ_DATA | UREL_FI_RMA_PRIMARY | UREL_FI_RMA_SECONDARY)
/*
 * Registrations need allocated memory and the keys are the module's random
 * rkeys; remote addresses are offsets in the registration (no FI_MR_VIRT_ADDR:
 * the initiator cannot know the target's base address, and the module takes
 * an offset). Open MPI's btl ofi then sends offsets (its use_virt_addr off).
 */
#define UREL_FI_MR_MODE (FI_MR_ALLOCATED | FI_MR_PROV_KEY)
/* Elements of one atomic call: each is its own remote atomic. */
#define UREL_FI_ATOMIC_COUNT 64
/* Remote CQ data rides in the core's 64-bit immediate field. */
#define UREL_FI_CQ_DATA_SIZE 8

extern struct fi_provider urel_fi_prov;

#define UREL_FI_WARN(subsys, ...) FI_WARN(&urel_fi_prov, subsys, __VA_ARGS__)
#define UREL_FI_INFO(subsys, ...) FI_INFO(&urel_fi_prov, subsys, __VA_ARGS__)
#define UREL_FI_DBG(subsys, ...) FI_DBG(&urel_fi_prov, subsys, __VA_ARGS__)

struct urel_fi_fabric {
	struct fid_fabric fid;
};

struct urel_fi_ep;

struct urel_fi_domain {
	struct fid_domain fid;
	struct urel_device *dev;
	struct sockaddr_storage src; /* where endpoints bind (port from the info, else any) */
	socklen_t srclen;
	uint64_t caps;
	enum fi_threading threading; /* never FI_THREAD_UNSPEC: urel_fi_default_threading() */
	bool ep_locks, cq_locks; /* its endpoints and CQs take their locks (domain.c) */
	unsigned int uep_flags; /* urel_ep_create_flags()' flags for its endpoints (domain.c) */
	pthread_mutex_t lock; /* the fields below */
	/*
	 * The library endpoint the registrations belong to: made by the first
	 * fi_mr_reg or fi_endpoint, used by @rma_owner (NULL: parked, waiting
	 * for the next endpoint) and kept while registrations remain.
	 */
	struct urel_ep *rma_uep;
	struct urel_fi_ep *rma_owner;
	size_t nmr;
	struct urel_fi_mr *mrs;
};

struct urel_fi_mr {
	struct fid_mr fid;
	struct urel_fi_domain *dom;
	struct urel_mr *mr;
	struct urel_fi_mr *next; /* the domain's list, under its lock */
	uint64_t key;
	size_t len;
	bool remote_write;
};

struct urel_fi_eq {
	struct fid_eq fid;
};

/* One address of an AV; @live is false once removed. */
struct urel_fi_av_entry {
	struct sockaddr_storage addr;
	socklen_t len;
	bool live;
};

struct urel_fi_av {
	struct fid_av fid;
	struct urel_fi_domain *dom;
	enum fi_av_type type;
	pthread_mutex_t lock;
	struct urel_fi_av_entry *ent; /* by fi_addr */
	size_t n, cap;
	struct urel_fi_ep **eps; /* endpoints bound to it */
	size_t neps;
};

/* A completion waiting in a CQ (an error one when @err is set). */
struct urel_fi_cqe {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err; /* positive FI_E* */
	int prov_errno; /* positive errno from the library */
	size_t olen;
};

struct urel_fi_cq {
	struct fid_cq fid;
	struct urel_fi_domain *dom;
	enum fi_cq_format format;
	bool locked; /* take @lock: the domain's cq_locks */
	pthread_mutex_t lock; /* the ring and the endpoint list (written under it) */
	struct urel_fi_cqe *ring;
	size_t head, count, cap; /* count: also read without the lock (cq.c) */
	struct urel_fi_ep *eps[UREL_FI_CQ_EPS]; /* also read without the lock (cq.c) */
	size_t neps;
};

/* An operation of an endpoint the library has not finished yet. */
struct urel_fi_op {
	struct urel_fi_op *next, *prev;
	struct urel_msg_req *req;
	void *context;
	uint64_t flags; /* completion flags: FI_SEND/FI_RECV, FI_MSG/FI_TAGGED */
	void *buf;
	void *bounce; /* fi_inject's copy, or the gathered or to-be-scattered iovs */
	struct iovec *iov; /* a receive of several iovs: where the bounce's bytes go */
	size_t iov_count;
	bool report; /* generate a completion on success */
	bool discard; /* FI_DISCARD: the bytes are dropped */
	bool cancelled;
	/* Last (a reuse clears what is above): an injected send's copy, bounce points here. */
	unsigned char inject[UREL_FI_INJECT_SIZE];
};

/* Index 0 and 1 of urel_fi_ep.posted; the RMA kinds follow. */
#define UREL_FI_POSTED_SEND 0
#define UREL_FI_POSTED_RECV 1

enum urel_fi_rma_kind {
	UREL_FI_RMA_WRITE,
	UREL_FI_RMA_READ,
	UREL_FI_RMA_ATOMIC
};

/*
 * An RMA or atomic operation, posted to the library in pieces (rma.c): a
 * write or read in pieces of ep->rma_piece bytes, an atomic one element per
 * piece. It completes when every piece did, with the first error.
 */
struct urel_fi_rma {
	struct urel_fi_rma *next, *prev;
	struct urel_request req; /* the context of every piece; .user is this */
	void *context;
	uint64_t cflags; /* completion flags */
	bool report; /* a completion on success too */
	enum urel_fi_rma_kind kind;
	urel_peer_t peer;
	char *buf; /* write: source; read: destination; atomic: operands */
	size_t len; /* bytes, or elements of an atomic */
	size_t posted; /* bytes or elements handed to the library */
	unsigned int out; /* pieces posted and not completed (less the ones not folded yet) */
	int err; /* the first error, a negative errno */
	/* completed pieces and their first error, not folded into @out yet (atomic; rma.c) */
	unsigned int done_pieces;
	int done_err;
	uint64_t key, off; /* atomics: the target's rkey and the offset of the first byte */
	/* writes and reads: the remote iovs, and the local ones a read scatters into */
	struct fi_rma_iov riov[UREL_FI_IOV_LIMIT];
	size_t nriov;
	struct iovec liov[UREL_FI_IOV_LIMIT];
	size_t nliov; /* 0: @buf is the application's own */
	char *bounce; /* gathered write or read to scatter, freed with the op */
	/* fi_writedata: the notice sent behind the write (rma.c) */
	bool cq_data, noted;
	uint64_t data;
	struct urel_msg_req *note;
	/* atomics */
	enum urel_atomic_op aop;
	unsigned int size; /* bytes per element */
	bool no_operand; /* FI_ATOMIC_READ: a fetch-add of 0 */
	const char *compare;
	char *result;
	char *store; /* extra bytes allocated with it (atomic operands) */
};

struct urel_fi_ep {
	struct fid_ep fid;
	struct urel_fi_domain *dom;
	uint64_t caps;
	uint64_t tx_flags, rx_flags; /* default op_flags */
	struct urel_ep *uep;
	struct urel_msg *m;
	struct urel_fi_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	struct urel_fi_av *av;
	bool locked; /* take @lock: the domain's ep_locks */
	pthread_mutex_t lock; /* everything below */
	struct urel_fi_op *ops; /* outstanding, newest first */
	unsigned int ntx, nrx;
	struct urel_fi_op *spare_ops; /* finished ones without iovs, for reuse (by next) */
	unsigned int nspare_ops;
	urel_peer_t *peer_of; /* fi_addr -> peer handle, 0: none */
	size_t npeer_of;
	fi_addr_t *addr_of; /* peer handle -> fi_addr */
	size_t naddr_of;
	struct urel_fi_rma *rmas; /* RMA and atomics outstanding, newest first */
	unsigned int nrma;
	size_t rma_piece; /* bytes of one library put or get */
	/* writes with remote CQ data: the notice's length, and the receive for those of peers */
	size_t note_len;
	bool note_after_put; /* the notice cannot follow the put on its channel: wait for it */
	struct urel_msg_req *note_rx;
	unsigned char *note_buf;
	bool enabled;
	/*
	 * Operations the library took, by kind (sends, receives, then
	 * enum urel_fi_rma_kind's): logged at close, so a run can tell what
	 * really went through the provider (osc rdma may use shared memory).
	 */
	unsigned long long posted[2 + UREL_FI_RMA_ATOMIC + 1];
	/*
	 * The library's count of completed requests (urel_msg_completions())
	 * when the operations were last tested under the lock, or
	 * UREL_FI_REAP_DUE when the next CQ poll must test them anyway (RMAs
	 * out, a notice receive to post again). Atomic: a poll reads it
	 * without the lock (urel_fi_ep_progress()).
	 */
	uint64_t reaped_at;
};

#define UREL_FI_REAP_DUE UINT64_MAX

/* The data path's locks, taken unless the threading level makes them unnecessary. */
static inline void urel_fi_ep_lock(struct urel_fi_ep *ep)
{
	if (ep->locked)
		pthread_mutex_lock(&ep->lock);
}

static inline void urel_fi_ep_unlock(struct urel_fi_ep *ep)
{
	if (ep->locked)
		pthread_mutex_unlock(&ep->lock);
}

static inline void urel_fi_cq_lock(struct urel_fi_cq *cq)
{
	if (cq->locked)
		pthread_mutex_lock(&cq->lock);
}

static inline void urel_fi_cq_unlock(struct urel_fi_cq *cq)
{
	if (cq->locked)
		pthread_mutex_unlock(&cq->lock);
}

/* init.c */
size_t urel_fi_max_msg_size(void);
enum fi_threading urel_fi_default_threading(void);
int urel_fi_errno(int err);

/* fabric.c */
int urel_fi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* domain.c */
bool urel_fi_threading_ok(enum fi_threading t);
int urel_fi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
			void *context);

/* av.c */
int urel_fi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		    void *context);
int urel_fi_av_bind_ep(struct urel_fi_av *av, struct urel_fi_ep *ep);
void urel_fi_av_unbind_ep(struct urel_fi_av *av, struct urel_fi_ep *ep);

/* cq.c */
int urel_fi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		    void *context);
int urel_fi_cq_push(struct urel_fi_cq *cq, const struct urel_fi_cqe *c);
int urel_fi_cq_bind_ep(struct urel_fi_cq *cq, struct urel_fi_ep *ep);
void urel_fi_cq_unbind_ep(struct urel_fi_cq *cq, struct urel_fi_ep *ep);

/* ep.c */
int urel_fi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		    void *context);
int urel_fi_ep_add_peer(struct urel_fi_ep *ep, fi_addr_t addr, const struct sockaddr *sa,
			socklen_t len);
void urel_fi_ep_del_peer(struct urel_fi_ep *ep, fi_addr_t addr);
void urel_fi_ep_progress(struct urel_fi_ep *ep);

/* xfer.c */
extern struct fi_ops_msg urel_fi_msg_ops;
extern struct fi_ops_tagged urel_fi_tagged_ops;
void urel_fi_ep_reap(struct urel_fi_ep *ep);
void urel_fi_ep_collect(struct urel_fi_ep *ep);
void urel_fi_op_free(struct urel_fi_ep *ep, struct urel_fi_op *op);
void urel_fi_op_free_spares(struct urel_fi_ep *ep);
ssize_t urel_fi_ep_cancel(fid_t fid, void *context);

/* domain.c: the library endpoint of a new fi endpoint, and its release */
int urel_fi_domain_ep_get(struct urel_fi_domain *d, struct urel_fi_ep *ep,
			  const struct sockaddr *src, socklen_t srclen, struct urel_ep **uep);
void urel_fi_domain_ep_put(struct urel_fi_domain *d, struct urel_fi_ep *ep, bool drained);

/* mr.c */
extern struct fi_ops_mr urel_fi_mr_ops;
bool urel_fi_mr_writable(struct urel_fi_ep *ep, uint64_t key, uint64_t off, uint64_t len);

/* iov.c */
int urel_fi_iov_len(const struct iovec *iov, size_t count, size_t *len);

/* urel_fi_iov_len() without the call for one iov, as most sends and receives have. */
static inline int urel_fi_iov_bytes(const struct iovec *iov, size_t count, size_t *len)
{
	if (count == 1 && iov && (iov->iov_base || !iov->iov_len)) {
		*len = iov->iov_len;
		return 0;
	}
	return urel_fi_iov_len(iov, count, len);
}
void urel_fi_iov_gather(void *dst, const struct iovec *iov, size_t count);
void urel_fi_iov_scatter(const struct iovec *iov, size_t count, const void *src, size_t len);

/* rma.c */
extern struct fi_ops_rma urel_fi_rma_ops;
struct urel_fi_rma *urel_fi_rma_new(struct urel_fi_ep *ep, void *context, uint64_t cflags,
				    uint64_t flags, size_t extra);
ssize_t urel_fi_rma_submit(struct urel_fi_ep *ep, struct urel_fi_rma *op, fi_addr_t dest);
void urel_fi_rma_progress(struct urel_fi_ep *ep);
bool urel_fi_rma_drain(struct urel_fi_ep *ep, int timeout_ms);
void urel_fi_rma_free_all(struct urel_fi_ep *ep);

/* note.c: notices of writes with remote CQ data */
int urel_fi_note_open(struct urel_fi_ep *ep);
void urel_fi_note_close(struct urel_fi_ep *ep);
void urel_fi_note_progress(struct urel_fi_ep *ep);
int urel_fi_note_send(struct urel_fi_ep *ep, struct urel_fi_rma *op);

/* atomic.c */
extern struct fi_ops_atomic urel_fi_atomic_ops;
int urel_fi_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
			 struct fi_atomic_attr *attr, uint64_t flags);

/* stubs.c: what this provider does not offer */
int urel_fi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int urel_fi_no_control(struct fid *fid, int command, void *arg);
int urel_fi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			void *context);

#endif /* UREL_FI_H */
