/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel tagged messaging: MPI-grade two-sided messages with 64-bit
 * match bits and an ignore mask, on top of one endpoint of the core API
 * (usnicrel.h). See usnicrel_msg(7).
 *
 * A message from peer P with match bits B is accepted by a receive naming
 * P (or UREL_MSG_ANY_PEER) whose bits equal B outside the receive's ignore
 * mask. Posted receives are matched oldest first; messages from one sender
 * are matched in the order they were sent, whatever their size; messages
 * nobody waits for yet are kept in arrival order.
 *
 * A peer whose message the kernel could not deliver (dead, restarted,
 * removed) fails for good: every request waiting on it, and every receive
 * from any source then posted, completes with that error; later sends and
 * receives naming it fail at once (usnicrel_msg(7), Peer failure).
 *
 * Every function returns 0 (or a count, or a flag) on success and a negative
 * errno on failure. Thread-safe: a context serialises its queues with one
 * mutex, never held while the core runs a callback.
 */
#ifndef USNICREL_MSG_H
#define USNICREL_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <usnicrel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct urel_msg; /* tagged messaging on one endpoint */
struct urel_msg_req; /* an outstanding non-blocking send or receive */
struct urel_msg_handle; /* a message taken off the queue by a matched probe */

/* A receive or probe that accepts messages from every peer (0 never names a peer). */
#define UREL_MSG_ANY_PEER ((urel_peer_t)0)

/*
 * The context itself as a peer: a send to it is matched by its own
 * receives (naming UREL_MSG_SELF or UREL_MSG_ANY_PEER), as MPI's sends to
 * one's own rank. Up to the eager limit a standard send is copied and
 * completes at once; a synchronous or larger one completes when a receive
 * (or matched probe) takes it, its bytes copied once.
 */
#define UREL_MSG_SELF ((urel_peer_t)0xfffffffe)

/*
 * Protocol limits; zero fields take the defaults, which the environment
 * variables in brackets override: messages up to @tiny_max bytes travel
 * on the command channel [UREL_MSG_TINY_MAX], up to @eager_max on the data
 * channel [UREL_MSG_EAGER_MAX], larger ones by rendezvous: the receiver
 * reads them with RDMA gets of @rndv_chunk bytes [UREL_MSG_RNDV_CHUNK].
 * Blocking calls poll @spin times before they sleep [UREL_MSG_SPIN].
 * While a request waits on a peer (a send for its receiver's answer, a
 * receive naming it, a rendezvous read), progress sends that peer a
 * keepalive every @keepalive_ms milliseconds [UREL_MSG_KEEPALIVE_MS], so
 * that a peer that died is found by the kernel (usnic_rel(4): retry_limit,
 * stall_timeout_ms) even when nothing else is sent to it.
 * With @progress_thread 1 [UREL_MSG_PROGRESS_THREAD] the context runs a
 * thread of its own that makes progress while the application computes,
 * so rendezvous and synchronous sends of its peers advance (2: none, also
 * overriding the environment).
 */
struct urel_msg_attr {
	uint32_t tiny_max;
	uint32_t eager_max;
	uint32_t rndv_chunk;
	uint32_t spin;
	uint32_t keepalive_ms;
	uint32_t progress_thread;
};

/* What a completed receive (or a probe) found. */
struct urel_msg_status {
	urel_peer_t peer; /* the sender */
	uint64_t tag; /* the message's match bits */
	size_t len; /* the message's length as sent */
	size_t received; /* bytes placed in the receive buffer */
	int error; /* 0, -EMSGSIZE (buffer too small), -ECANCELED, or a peer failure */
	uint64_t data; /* the sender's immediate data (urel_msg_isend_data()), else 0 */
};

/* Send flag: complete only once a receive has matched the message (MPI_Ssend). */
#define UREL_MSG_SYNC (1U << 0)

/*
 * Start tagged messaging on @ep (which then belongs to it: the endpoint's
 * receive handler is taken). Limits from @attr (NULL: defaults).
 */
int urel_msg_open(struct urel_ep *ep, const struct urel_msg_attr *attr, struct urel_msg **mp);

/*
 * Stop. First waits until the kernel has finished every send and read the
 * context started (delivered, or failed with its peer), so that messages
 * already sent are not lost when the process exits; then outstanding
 * requests are freed and never complete.
 */
int urel_msg_close(struct urel_msg *m);

/* The limits in effect. */
int urel_msg_query(const struct urel_msg *m, struct urel_msg_attr *attr);

/* What a context holds and what it refused, for monitoring (urel_msg_stats(3)). */
struct urel_msg_stats {
	uint64_t unexpected; /* messages queued that no receive took yet */
	uint64_t unexpected_bytes; /* bytes copied for them (eager messages only) */
	uint64_t unexpected_peak_bytes; /* the most unexpected_bytes ever was */
	uint64_t early; /* arrivals held until an earlier message of their sender */
	uint64_t early_bytes;
	uint64_t dropped; /* malformed, unknown, or from a failed peer */
	uint64_t peers_failed; /* peers found dead, restarted or removed */
	uint64_t keepalives; /* keepalive messages sent */
	uint64_t deferred; /* arrivals put back for lack of memory, taken again later */
	/* Since LIBUSNICREL_0.8: blocking calls that slept their full timeout
	 * although what they waited for was done meanwhile (by another thread's
	 * progress): a wake-up lost. 0 unless the process is out of file
	 * descriptors. */
	uint64_t late_wakeups;
	/* Since LIBUSNICREL_0.9: the progress thread's (progress_thread 1)
	 * sleeps instead of a pass while the application made progress itself
	 * (UREL_PROGRESS_STANDBACK_US, urel_msg_open(3)). */
	uint64_t standbacks;
};

/* Fill *@st with the context's counters now. */
int urel_msg_stats(struct urel_msg *m, struct urel_msg_stats *st);

/*
 * Piecewise rendezvous: sends too large to pin at once, registered a window
 * at a time under RLIMIT_MEMLOCK (urel_msg_stats(3)). Since LIBUSNICREL_0.7.
 */
struct urel_msg_rndv_stats {
	uint64_t windows; /* windows of this context's sends registered */
	uint64_t window_bytes; /* bytes in them */
	uint64_t pin_waits; /* sends that waited to register a window (limit, memory) */
	uint64_t failures; /* piecewise sends failed (nothing to wait for, or an error) */
	uint64_t pinned_bytes; /* held in windows now by every context of the process */
	uint64_t pinned_peak; /* the most pinned_bytes ever was */
};

int urel_msg_rndv_stats(struct urel_msg *m, struct urel_msg_rndv_stats *st);

/* Make progress without blocking; returns how many completions were handled. */
int urel_msg_progress(struct urel_msg *m);

/* --- Non-blocking ------------------------------------------------------- */

int urel_msg_isend(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len, uint64_t tag,
		   unsigned int flags, struct urel_msg_req **reqp);

/*
 * As urel_msg_isend(), with 8 bytes of immediate data that the receive (or a
 * probe) reports in its status' @data; they ride in the core's immediate
 * field, not in the payload.
 */
int urel_msg_isend_data(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
			uint64_t tag, uint64_t data, unsigned int flags,
			struct urel_msg_req **reqp);

/*
 * A standard send, with immediate data, that is posted now with no request
 * or not at all: 0 once its bytes have left @buf, -EAGAIN when it would
 * have to wait (sends queued ahead, the ring full; also for UREL_MSG_SELF
 * and above the eager limit): send it with urel_msg_isend_data() then.
 */
int urel_msg_inject_data(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len,
			 uint64_t tag, uint64_t data);

int urel_msg_irecv(struct urel_msg *m, urel_peer_t peer, void *buf, size_t len, uint64_t tag,
		   uint64_t ignore, struct urel_msg_req **reqp);

/*
 * 1 when @req completed (then *@st is filled, may be NULL, and @req is
 * freed), 0 when not yet.
 */
int urel_msg_test(struct urel_msg_req *req, struct urel_msg_status *st);

/*
 * As urel_msg_test() without a progress pass: for a caller that made
 * progress once (urel_msg_progress()) and now looks at many requests.
 */
int urel_msg_test_noprogress(struct urel_msg_req *req, struct urel_msg_status *st);

/*
 * How many requests of @m have completed so far, read without a lock: a
 * caller that read it, then tested each request it holds, need test none
 * again while it has not moved (a busy poll that finds nothing stays
 * cheap). Since LIBUSNICREL_0.10.
 */
int urel_msg_completions(struct urel_msg *m, uint64_t *count);

/* Wait for @req, fill *@st (may be NULL), free @req; returns st->error. */
int urel_msg_wait(struct urel_msg_req *req, struct urel_msg_status *st);

/*
 * Wait for all @n requests (a NULL entry is skipped; each is set to NULL as
 * it completes); @st may be NULL or hold @n statuses. Returns 0, or the
 * first request's error in array order.
 */
int urel_msg_waitall(unsigned int n, struct urel_msg_req **reqs, struct urel_msg_status *st);

/*
 * Wait for one of @n requests; *@index says which (it is set to NULL in
 * @reqs). Returns its error; -EINVAL if every entry is NULL.
 */
int urel_msg_waitany(unsigned int n, struct urel_msg_req **reqs, unsigned int *index,
		     struct urel_msg_status *st);

/*
 * Cancel a receive that has not matched: it completes with -ECANCELED
 * (test or wait it as usual). -EBUSY if it already matched; sends cannot
 * be cancelled (-EINVAL).
 */
int urel_msg_cancel(struct urel_msg_req *req);

/* --- Blocking ------------------------------------------------------------- */

int urel_msg_send(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len, uint64_t tag);
int urel_msg_ssend(struct urel_msg *m, urel_peer_t peer, const void *buf, size_t len, uint64_t tag);
int urel_msg_recv(struct urel_msg *m, urel_peer_t peer, void *buf, size_t len, uint64_t tag,
		  uint64_t ignore, struct urel_msg_status *st);

/* --- Probes ------------------------------------------------------------- */

/* Is a matching message waiting? 1 (and *@st) or 0; the message stays queued. */
int urel_msg_iprobe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
		    struct urel_msg_status *st);
int urel_msg_probe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
		   struct urel_msg_status *st);

/*
 * Matched probe: as iprobe, but the message leaves the queue (no other
 * receive can take it; a synchronous sender learns it matched) and *@hp
 * names it for urel_msg_mrecv()/urel_msg_imrecv().
 */
int urel_msg_improbe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
		     struct urel_msg_handle **hp, struct urel_msg_status *st);
int urel_msg_mprobe(struct urel_msg *m, urel_peer_t peer, uint64_t tag, uint64_t ignore,
		    struct urel_msg_handle **hp, struct urel_msg_status *st);
int urel_msg_imrecv(struct urel_msg_handle *h, void *buf, size_t len, struct urel_msg_req **reqp);
int urel_msg_mrecv(struct urel_msg_handle *h, void *buf, size_t len, struct urel_msg_status *st);

/* --- MPI tag layouts ------------------------------------------------------ */
/*
 * The OFI MTL's packings of (context id, source rank, tag) into match bits;
 * the top two bits stay zero (reserved for protocol use):
 *   UREL_TAG_1:    context 12 bits [61:50], source 18 [49:32], tag 32 [31:0]
 *   UREL_TAG_2:    context 24 bits [61:38], source 18 [37:20], tag 20 [19:0]
 *   UREL_TAG_FULL: context 30 bits [61:32], tag 32 [31:0]; the source is
 *                  not in the bits (match on the peer instead)
 * The tag field's top bit is reserved for the library's own traffic, so the
 * largest user tag is 2^31 - 1 (2^19 - 1 for UREL_TAG_2) and UREL_ANY_TAG
 * never accepts internal messages.
 */
enum urel_tag_layout {
	UREL_TAG_1 = 1,
	UREL_TAG_2 = 2,
	UREL_TAG_FULL = 3
};

#define UREL_ANY_SOURCE (-1)
#define UREL_ANY_TAG (-1)

struct urel_tag_limits {
	uint32_t ctx_max;
	int32_t src_max; /* UREL_TAG_FULL: INT32_MAX, the source is not in the bits */
	int32_t tag_max;
};

/* -EINVAL for an unknown layout. */
int urel_tag_limits(enum urel_tag_layout layout, struct urel_tag_limits *lim);

/*
 * Pack a receive's or a send's (@ctx, @src, @tag) into @bits and the ignore
 * mask into @ignore (may be NULL; 0 for a send). @src may be UREL_ANY_SOURCE
 * and @tag UREL_ANY_TAG. -ERANGE when a value exceeds its field (never
 * truncated), -EINVAL for an unknown layout or a negative value other than
 * the wildcards.
 */
int urel_tag_pack(enum urel_tag_layout layout, uint32_t ctx, int src, int tag, uint64_t *bits,
		  uint64_t *ignore);

/* The fields of @bits (@src is UREL_ANY_SOURCE for UREL_TAG_FULL); -ERANGE for internal tags. */
int urel_tag_unpack(enum urel_tag_layout layout, uint64_t bits, uint32_t *ctx, int *src, int *tag);

/* --- Jobs and groups ------------------------------------------------------ */
/*
 * A job is the set of processes started together, each with a rank in
 * [0, size) and one endpoint, whose addresses every rank knows. A group is
 * an ordered set of a job's ranks with a context id: traffic of two groups
 * never matches. Groups pack (context, source rank, tag) with one of the
 * tag layouts above; their collectives use internal tags (the tag's reserved
 * bit) in the group's context, which user receives never accept.
 */
struct urel_job;
struct urel_group;

/*
 * Explicit bootstrap: this process is @rank of @size, @addrs[r] is rank r's
 * endpoint address (@addrs[rank] is @m's own); every other rank is inserted
 * into the endpoint's address vector.
 */
int urel_job_init(struct urel_msg *m, int rank, int size, const struct sockaddr_storage *addrs,
		  struct urel_job **jp);

/*
 * Bootstrap through PMIx (a launcher such as Open MPI's mpirun or Slurm's
 * srun --mpi=pmix): rank and size from the PMIx server; @m's endpoint
 * address is put, committed and exchanged by a fence. -ENOSYS when the
 * library was built without PMIx, -ENOENT when no PMIx server is reachable.
 */
int urel_job_init_pmix(struct urel_msg *m, struct urel_job **jp);

/* Leave the job (PMIx_Finalize for a PMIx job); NULL is ignored. */
int urel_job_fini(struct urel_job *j);

int urel_job_rank(const struct urel_job *j);
int urel_job_size(const struct urel_job *j);

/* Rank @rank's peer handle; 0 for this process or a bad rank. */
urel_peer_t urel_job_peer(const struct urel_job *j, int rank);

/* The group of all ranks (context id 1), packing tags with @layout. */
int urel_group_world(struct urel_job *j, enum urel_tag_layout layout, struct urel_group **gp);

/* Collective over @g: a copy with a new context id, agreed by all members. */
int urel_group_dup(struct urel_group *g, struct urel_group **gp);

int urel_group_free(struct urel_group *g);
int urel_group_rank(const struct urel_group *g);
int urel_group_size(const struct urel_group *g);
uint32_t urel_group_context(const struct urel_group *g);

/* Tagged messages between ranks of @g; @src may be UREL_ANY_SOURCE, @tag UREL_ANY_TAG. */
int urel_group_isend(struct urel_group *g, int dest, const void *buf, size_t len, int tag,
		     unsigned int flags, struct urel_msg_req **reqp);
int urel_group_irecv(struct urel_group *g, int src, void *buf, size_t len, int tag,
		     struct urel_msg_req **reqp);

/* The group rank and tag of a status of @g's traffic. */
int urel_group_source(const struct urel_group *g, const struct urel_msg_status *st, int *src,
		      int *tag);

/* Collectives over @g (every member calls them in the same order). */
int urel_group_barrier(struct urel_group *g);

/* Rank r's @len bytes of @sendbuf land at @recvbuf + r * @len on every rank. */
int urel_group_allgather(struct urel_group *g, const void *sendbuf, size_t len, void *recvbuf);

#ifdef __cplusplus
}
#endif

#endif /* USNICREL_MSG_H */
