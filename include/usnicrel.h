/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: reliable datagrams and emulated RDMA over the usnic_rel kernel
 * module. Every function returns 0 (or a count) on success and a negative errno
 * on failure; urel_strerror() explains the codes in this library's terms.
 *
 * Objects: a device (an open /dev/usnic_rel, an independent context) owns
 * endpoints and memory registrations. An endpoint is bound to one UDP address
 * and has two channels, each with its own send queue; it has one completion
 * queue and a pool of receive buffers. Peers are named by handles from the
 * endpoint's address vector.
 *
 * Threads: every function may be called from several threads at once, except
 * that an object must not be destroyed while another thread uses it. Each
 * endpoint serialises its send side, its completion side and its receive
 * buffer ring with one mutex each; no lock is held while a callback runs.
 */
#ifndef USNICREL_H
#define USNICREL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The default device node; override with USNIC_REL_DEVICE in the environment. */
#define UREL_DEFAULT_DEVICE "/dev/usnic_rel"

struct urel_device;
struct urel_ep;
struct urel_mr;

/* A peer in an endpoint's address vector; 0 never names a peer. */
typedef uint32_t urel_peer_t;

/* Channels: command (priority, small MTU) and data (bulk, netdev MTU). */
enum {
	UREL_CHAN_CMD = 0,
	UREL_CHAN_DATA = 1,
	UREL_NR_CHANS = 2
};

/* Payloads up to this size travel inside the send descriptor. */
#define UREL_INLINE_MAX 64

/* Completion opcodes. */
enum urel_opcode {
	UREL_OP_SEND = 1,
	UREL_OP_PUT = 2,
	UREL_OP_GET = 3,
	UREL_OP_ATOMIC = 4,
	UREL_OP_RECV = 16
};

/* Access rights of a memory registration. */
#define UREL_ACCESS_LOCAL_WRITE (1U << 0)
#define UREL_ACCESS_REMOTE_READ (1U << 1)
#define UREL_ACCESS_REMOTE_WRITE (1U << 2)
#define UREL_ACCESS_REMOTE_ATOMIC (1U << 3)

/* Post flags: queue the operation but leave the doorbell to a later call. */
#define UREL_POST_MORE (1U << 0)
/*
 * urel_ep_put() only: the target answers the put only if it refuses it; it
 * completes (in order) once a later operation to the same peer on the data
 * channel is answered, or with its own error.
 */
#define UREL_POST_QUIET (1U << 1)

/* --- Device ------------------------------------------------------------- */

/*
 * Open the usnic_rel device at @path (NULL: $USNIC_REL_DEVICE or
 * /dev/usnic_rel) and check that the module speaks this library's ABI.
 * Returns 0 and sets *@devp, or:
 *   -ENOENT  no such device node: is the module loaded (modprobe usnic_rel)?
 *   -ENOTTY  @path is not a usnic_rel device
 *   -EPROTO  the module's ABI version differs from the library's
 */
int urel_device_open(const char *path, struct urel_device **devp);

/* Close a device, destroying its remaining endpoints and registrations; NULL is ignored. */
void urel_device_close(struct urel_device *dev);

/* The ABI version the module reported at open. */
unsigned int urel_device_abi_version(const struct urel_device *dev);

/* The ABI version this library was built for. */
unsigned int urel_library_abi_version(void);

/* A message for a negative errno returned by this library (or its positive value). */
const char *urel_strerror(int err);

/* The device's file descriptor: readable (poll, epoll) when any endpoint has completions. */
int urel_device_fd(const struct urel_device *dev);

/*
 * Wait up to @timeout_ms (-1: forever) for completions on any endpoint of
 * @dev, first handing the kernel any sends it left queued. Returns 1 when
 * completions are ready, 0 on timeout, -EINTR when a signal interrupted.
 */
int urel_device_wait(struct urel_device *dev, int timeout_ms);

/* --- Endpoints ---------------------------------------------------------- */

/* Ring sizes of a new endpoint; zero fields take the module's defaults. */
struct urel_ep_attr {
	uint32_t sq_entries; /* send descriptors per channel */
	uint32_t cq_entries; /* completions */
	uint32_t rx_bufs; /* receive buffers */
	uint32_t staging_size; /* bytes for send payloads not sent inline */
	uint32_t rx_buf_size; /* bytes per receive buffer: the largest message received */
};

struct urel_ep_info {
	struct sockaddr_storage addr; /* bound address and port */
	uint32_t incarnation; /* random, changes with every endpoint */
	uint32_t mtu[UREL_NR_CHANS]; /* payload bytes per packet */
	uint32_t max_msg[UREL_NR_CHANS]; /* bytes per message */
	uint32_t inline_max; /* UREL_INLINE_MAX */
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t rx_bufs;
	uint32_t rx_buf_size;
	uint32_t staging_size;
	uint32_t debug_id; /* /sys/kernel/debug/usnic_rel/ep<debug_id> */
};

/*
 * Create an endpoint bound to @addr (AF_INET or AF_INET6; port 0 picks one),
 * with ring sizes from @attr (NULL: defaults), and post all its receive
 * buffers.
 */
int urel_ep_create(struct urel_device *dev, const struct sockaddr *addr, socklen_t addrlen,
		   const struct urel_ep_attr *attr, struct urel_ep **epp);

/*
 * Endpoint creation flag: the caller never makes two calls at once on the
 * endpoint (nor on its device's urel_device_progress()/urel_device_wait(),
 * nor on a layer opened on it), so the library takes none of its send,
 * completion and receive locks. A tagged context on it may not run a
 * progress thread, nor a window's context one (both refused: -EINVAL).
 */
#define UREL_EP_SERIAL (1U << 0)

/* urel_ep_create() with @flags (0 or UREL_EP_SERIAL; others: -EINVAL). */
int urel_ep_create_flags(struct urel_device *dev, const struct sockaddr *addr, socklen_t addrlen,
			 const struct urel_ep_attr *attr, unsigned int flags, struct urel_ep **epp);

/* Destroy an endpoint; operations still outstanding never complete. */
int urel_ep_destroy(struct urel_ep *ep);

int urel_ep_query(const struct urel_ep *ep, struct urel_ep_info *info);

/* --- Address vector ----------------------------------------------------- */

/* Insert a peer endpoint's address (same family as @ep) and return its handle. */
int urel_av_insert(struct urel_ep *ep, const struct sockaddr *addr, socklen_t addrlen,
		   urel_peer_t *peer);

int urel_av_remove(struct urel_ep *ep, urel_peer_t peer);

/* --- Memory registration ------------------------------------------------ */

/*
 * Pin [@addr, @addr + @length) for remote access (UREL_ACCESS_*) by the peers
 * of @ep: peers of another endpoint cannot use its key.
 */
int urel_mr_reg(struct urel_ep *ep, void *addr, size_t length, unsigned int access,
		struct urel_mr **mrp);

int urel_mr_dereg(struct urel_mr *mr);

/* The key a peer names this registration with; 0 for NULL. */
uint64_t urel_mr_rkey(const struct urel_mr *mr);

/* --- Completions -------------------------------------------------------- */

struct urel_completion {
	void *context; /* send, RDMA: the context given when posting */
	const void *data; /* receive: the bytes, valid until urel_ep_release_recv() */
	uint64_t imm; /* receive: the sender's immediate data */
	int status; /* 0 or a negative errno */
	uint32_t len; /* bytes sent, read, written or received */
	urel_peer_t peer;
	uint32_t buf; /* receive: the buffer to give back */
	uint8_t opcode; /* enum urel_opcode */
	uint8_t channel; /* UREL_CHAN_* */
};

/*
 * Take up to @n completions of @ep into @out (resources of finished sends are
 * reclaimed on the way). Returns how many, 0 when none is ready.
 */
int urel_ep_poll_cq(struct urel_ep *ep, struct urel_completion *out, unsigned int n);

/* Give receive buffer @buf (from a UREL_OP_RECV completion) back to the kernel. */
int urel_ep_release_recv(struct urel_ep *ep, uint32_t buf);

/* --- Sends -------------------------------------------------------------- */

/*
 * Send @len bytes to @peer on channel @chan with immediate data @imm. The
 * bytes are copied before the call returns; the completion carries @context.
 * -EAGAIN: the send queue is full; -ENOBUFS: the staging area is full; in both
 * cases poll completions and retry. -EMSGSIZE: @len exceeds the channel's
 * max_msg. With UREL_POST_MORE the doorbell waits for a later post or
 * urel_ep_flush().
 */
int urel_ep_send(struct urel_ep *ep, urel_peer_t peer, unsigned int chan, const void *buf,
		 size_t len, uint64_t imm, void *context, unsigned int flags);

/* As urel_ep_send(), the message gathered from @iovcnt (at most 64) pieces. */
int urel_ep_sendv(struct urel_ep *ep, urel_peer_t peer, unsigned int chan, const struct iovec *iov,
		  unsigned int iovcnt, uint64_t imm, void *context, unsigned int flags);

/* Ring the doorbell for everything posted with UREL_POST_MORE. */
int urel_ep_flush(struct urel_ep *ep);

/* --- Emulated RDMA ------------------------------------------------------ */
/*
 * One-sided operations on a peer's registration named by @rkey, at byte
 * @remote_off in it. The completion reports the outcome at the target.
 * Puts travel on the data channel, gets and atomics on the command channel.
 */

int urel_ep_put(struct urel_ep *ep, urel_peer_t peer, const void *buf, size_t len, uint64_t rkey,
		uint64_t remote_off, void *context, unsigned int flags);

/* @buf receives the bytes when the operation completes successfully. */
int urel_ep_get(struct urel_ep *ep, urel_peer_t peer, void *buf, size_t len, uint64_t rkey,
		uint64_t remote_off, void *context, unsigned int flags);

enum urel_atomic_op {
	UREL_ATOMIC_FETCH_ADD = 1, /* *p += operand */
	UREL_ATOMIC_CAS = 2, /* if (*p == compare) *p = operand */
	UREL_ATOMIC_SWAP = 3 /* *p = operand */
};

struct urel_atomic {
	enum urel_atomic_op op;
	unsigned int size; /* operand width: 4 or 8 bytes */
	uint64_t operand;
	uint64_t compare; /* UREL_ATOMIC_CAS only */
	void *result; /* the value before the operation, @size bytes; may be NULL */
};

int urel_ep_atomic(struct urel_ep *ep, urel_peer_t peer, const struct urel_atomic *op,
		   uint64_t rkey, uint64_t remote_off, void *context, unsigned int flags);

/* --- Progress ----------------------------------------------------------- */

/*
 * A request of the progress engine: embed it in your own operation, post
 * with &request as the context, and urel_ep_progress() calls @complete.
 */
struct urel_request;
typedef void (*urel_request_fn)(struct urel_request *req, const struct urel_completion *c);
struct urel_request {
	urel_request_fn complete;
	void *user;
};

/* A receive handler keeps the buffer by returning this (and releases it later). */
#define UREL_RECV_KEEP 1
/*
 * A receive handler that cannot take the message now (out of memory) returns
 * this: the library keeps the completion and offers it again, before any
 * later completion of the endpoint, on a later progress call.
 */
#define UREL_RECV_AGAIN 2

/* Returns 0 (the library gives the buffer back), UREL_RECV_KEEP or UREL_RECV_AGAIN. */
typedef int (*urel_recv_fn)(struct urel_ep *ep, const struct urel_completion *c, void *arg);

/* Receive handler of urel_ep_progress(); NULL drops receives and returns their buffers. */
int urel_ep_set_recv_handler(struct urel_ep *ep, urel_recv_fn fn, void *arg);

/*
 * Drain up to @max completions (0: one batch) of @ep and dispatch each: sends
 * and RDMA to the urel_request their context points to (NULL: nothing),
 * receives to the receive handler. Returns how many were dispatched.
 * One thread at a time dispatches, in ring order; a concurrent caller
 * returns 0 once the other is done (or after a millisecond).
 */
int urel_ep_progress(struct urel_ep *ep, unsigned int max);

/* urel_ep_progress() on every endpoint of @dev; returns the total dispatched. */
int urel_device_progress(struct urel_device *dev, unsigned int max);

#ifdef __cplusplus
}
#endif

#endif /* USNICREL_H */
