/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * usnic_rel: reliable datagrams and emulated RDMA over UDP.
 * The ioctl ABI between /dev/usnic_rel and its userspace library, and the
 * layout of the rings an endpoint shares with userspace through mmap.
 *
 * Every ioctl structure except usnic_rel_abi_info starts with __u32 size
 * (the caller's sizeof) and __u32 flags. The module accepts a shorter
 * structure from an older caller as long as it reaches the last field the
 * ioctl needs (the trailing reserved fields may be missing and read as
 * zero; anything shorter is -EINVAL), and a longer one from a newer caller
 * as long as the bytes it does not know are zero; it writes back at most
 * @size bytes. The size bits of the ioctl number are ignored for the same
 * reason. Fields named reserved must be zero (-EINVAL otherwise).
 */
#ifndef _UAPI_USNIC_REL_H
#define _UAPI_USNIC_REL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * Bumped on any incompatible change of this header or of the ring layouts.
 * The library refuses to run against a module with another version.
 */
#define USNIC_REL_ABI_VERSION	6

#define USNIC_REL_DEVICE_NAME	"usnic_rel"

struct usnic_rel_abi_info {
	__u32 abi_version;	/* out: USNIC_REL_ABI_VERSION of the module */
	__u32 flags;		/* out: reserved, zero */
	__u64 reserved[3];	/* out: zero */
};

/* Channels: each has its own send ring, MTU and (later) sequence space. */
enum {
	USNIC_REL_CHAN_CMD = 0,		/* priority, small MTU */
	USNIC_REL_CHAN_DATA = 1,	/* bulk, MTU from the netdev */
	USNIC_REL_NR_CHANS
};

/* An IPv4 or IPv6 address and UDP port. */
struct usnic_rel_addr {
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 port;		/* UDP port, host byte order */
	__u32 reserved;		/* zero */
	__u8 addr[16];		/* IPv4: first 4 bytes, rest zero; IPv6: all */
};

/*
 * mmap'd regions of an endpoint. Map each whole region at the offset
 * CREATE_EP returns for it in region[].offset.
 */
enum {
	USNIC_REL_REGION_SQ_CMD = 0,	/* send ring of the command channel */
	USNIC_REL_REGION_SQ_DATA = 1,	/* send ring of the data channel */
	USNIC_REL_REGION_CQ = 2,	/* completion ring */
	USNIC_REL_REGION_RX_FREE = 3,	/* ring of free receive buffer indices */
	USNIC_REL_REGION_RX_BUFS = 4,	/* receive buffers, rx_buf_size each */
	USNIC_REL_REGION_STAGING = 5,	/* send payloads, placed by userspace */
	USNIC_REL_NR_REGIONS
};

/*
 * Every ring region starts with a header: the consumer's index and the
 * producer's index on their own cache lines, then the entries at
 * USNIC_REL_RING_DESC_OFF. Indices run freely and wrap at 2^32; the slot of
 * index i is i & (entries - 1). Who produces:
 *   SQ_CMD, SQ_DATA, RX_FREE: userspace writes tail, the kernel writes head.
 *   CQ: the kernel writes tail, userspace writes head.
 * Write your index with a release store after filling the entries, read the
 * other side's with an acquire load.
 */
struct usnic_rel_ring_hdr {
	__u32 head;
	__u32 pad0[15];
	__u32 tail;
	__u32 flags;		/* USNIC_REL_RING_F_*, written by the kernel */
	__u32 pad1[14];
};

/*
 * RX_FREE flags: the kernel ran out of receive buffers (or CQ room) while
 * holding packets it already acknowledged; after returning buffers, ring
 * the doorbell with USNIC_REL_DB_RX (the doorbell clears the flag). Put a
 * full memory barrier between the release store of the RX_FREE tail and
 * the load of the flag: the kernel sets the flag, runs a full barrier and
 * reads the tail again, so one of the two sees the other.
 */
#define USNIC_REL_RING_F_NEED_DOORBELL	(1U << 0)

#define USNIC_REL_RING_HEAD_OFF	0
#define USNIC_REL_RING_TAIL_OFF	64
#define USNIC_REL_RING_DESC_OFF	128

struct usnic_rel_region {
	__u64 offset;		/* out: mmap offset */
	__u32 size;		/* out: bytes to map */
	__u32 entries;		/* out: ring slots (power of two), or buffers */
};

/* Send opcodes (SQE) and completion opcodes (CQE). */
enum {
	USNIC_REL_OP_NOP = 0,
	USNIC_REL_OP_SEND = 1,		/* two-sided message */
	USNIC_REL_OP_PUT = 2,		/* RDMA write into a peer's registration */
	USNIC_REL_OP_GET = 3,		/* RDMA read from a peer's registration */
	USNIC_REL_OP_ATOMIC = 4,	/* remote 32/64-bit atomic */
	USNIC_REL_OP_RECV = 16,		/* CQE only: a message arrived */
};

/* SQE flags. */
#define USNIC_REL_SQE_INLINE	(1U << 0)	/* payload in sqe.inline_data */
/*
 * PUT only: the target answers it only when it refuses it; its success is
 * reported by the target's next answer on the channel (the wire format's
 * USNIC_REL_PUT_F_QUIET). It completes, in order, once a later operation
 * on the same channel to the same peer is answered, or with the error
 * that refused it, or when the connection fails: post an answered one
 * after it before waiting for it.
 */
#define USNIC_REL_SQE_QUIET	(1U << 1)

#define USNIC_REL_SQE_INLINE_MAX	64

/*
 * A send descriptor: 128 bytes. One-sided operations name the target's
 * registration by rkey and a byte offset in it (remote_off), never an
 * address, and complete when the target answered (a remote completion):
 *   PUT: len bytes (1 or more) from inline_data or the staging area.
 *   GET: len bytes (1 or more) land in the staging area at staging_off.
 *   ATOMIC: atomic_op is enum usnic_rel_atomic_op of the wire format,
 *	atomic_size 4 or 8 and equal to len, remote_off a multiple of it;
 *	operand[0] is the value to add (FADD) or to compare (CAS), operand[1]
 *	the value to store (SWAP, CAS); unused operands are zero. The old
 *	value returns in the completion's imm.
 * A refused operation completes with -ENOKEY (no registration with this
 * rkey for the target endpoint: none, deregistered, or bound to another
 * endpoint), -ERANGE (outside the registration), -EPERM (the registration
 * forbids the access, or was deregistered while a GET was being answered)
 * or -EINVAL (an atomic operand the target finds misaligned).
 */
struct usnic_rel_sqe {
	__u8 opcode;		/* USNIC_REL_OP_* */
	__u8 flags;		/* USNIC_REL_SQE_* */
	__u16 reserved0;	/* zero */
	__u32 peer;		/* peer handle from AV_INSERT */
	__u64 user_ctx;		/* returned as is in the completion */
	__u64 imm;		/* immediate data or tag, delivered with the message */
	__u32 len;		/* payload bytes */
	__u32 staging_off;	/* payload offset in the staging area (not INLINE) */
	__u64 rkey;		/* one-sided: the target's REG_MR rkey */
	__u64 remote_off;	/* one-sided: offset in that registration */
	__u64 reserved2[2];	/* zero */
	union {
		__u8 inline_data[USNIC_REL_SQE_INLINE_MAX];
		struct {
			__u64 operand[2];	/* add or compare, swap */
			__u32 atomic_op;
			__u32 atomic_size;
		} atomic;
	};
};

/* A completion: 48 bytes. */
struct usnic_rel_cqe {
	__u64 user_ctx;		/* send: sqe.user_ctx; receive: zero */
	__u64 imm;		/* receive: the sender's sqe.imm; atomic: old value */
	__s32 status;		/* 0 or a negative errno */
	__u32 len;		/* bytes sent or received */
	__u32 peer;		/* peer handle */
	__u32 buf;		/* receive: index of the buffer holding the data */
	__u8 opcode;		/* USNIC_REL_OP_SEND, USNIC_REL_OP_RECV, ... */
	__u8 channel;		/* USNIC_REL_CHAN_* */
	__u16 flags;		/* zero */
	__u32 reserved[3];	/* zero */
};

/* Bounds of usnic_rel_create_ep.rx_buf_size. */
#define USNIC_REL_RX_BUF_MIN	256
#define USNIC_REL_RX_BUF_MAX	65536

/* CREATE_EP: bind an endpoint to a local address and map its rings. */
struct usnic_rel_create_ep {
	__u32 size;
	__u32 flags;			/* in: zero */
	struct usnic_rel_addr addr;	/* in: local address, port 0 = any; out: port */
	__u32 sq_entries;		/* in/out: per send ring, 0 = default */
	__u32 cq_entries;		/* in/out: 0 = default */
	__u32 rx_bufs;			/* in/out: receive buffers, 0 = default */
	__u32 staging_size;		/* in/out: staging bytes, 0 = default */
	__u32 ep_id;			/* out: endpoint id in this open file */
	__u32 incarnation;		/* out: random, carried on the wire */
	__u32 mtu[USNIC_REL_NR_CHANS];	/* out: payload bytes per packet */
	__u32 max_msg[USNIC_REL_NR_CHANS]; /* out: bytes per message */
	/*
	 * in/out: bytes per receive buffer, 0 = default (64 KiB); a multiple
	 * of 64 from USNIC_REL_RX_BUF_MIN to USNIC_REL_RX_BUF_MAX. It is also
	 * the largest message this endpoint accepts: it is announced to every
	 * peer in the handshake, and a peer's send of a longer message fails
	 * with -EMSGSIZE.
	 */
	__u32 rx_buf_size;
	__u32 debug_id;			/* out: debugfs directory ep<debug_id> */
	struct usnic_rel_region region[USNIC_REL_NR_REGIONS];	/* out */
	__u64 reserved[4];		/* zero */
};

struct usnic_rel_destroy_ep {
	__u32 size;
	__u32 flags;		/* zero */
	__u32 ep_id;
	__u32 reserved;		/* zero */
};

/* AV_INSERT: a peer address (same family as the endpoint) -> peer handle. */
struct usnic_rel_av_insert {
	__u32 size;
	__u32 flags;			/* zero */
	__u32 ep_id;
	__u32 peer;			/* out: handle */
	struct usnic_rel_addr addr;	/* in: the peer's endpoint */
	__u64 reserved[2];		/* zero */
};

struct usnic_rel_av_remove {
	__u32 size;
	__u32 flags;		/* zero */
	__u32 ep_id;
	__u32 peer;
};

/* Access rights of a memory registration. */
#define USNIC_REL_ACCESS_LOCAL_WRITE	(1U << 0)
#define USNIC_REL_ACCESS_REMOTE_READ	(1U << 1)
#define USNIC_REL_ACCESS_REMOTE_WRITE	(1U << 2)
#define USNIC_REL_ACCESS_REMOTE_ATOMIC	(1U << 3)
#define USNIC_REL_ACCESS_ALL		0xfU

/*
 * REG_MR: pin [addr, addr + length), charged to RLIMIT_MEMLOCK (checked
 * before anything is allocated: -ENOMEM over the limit). The registration
 * serves the one-sided requests that arrive at endpoint ep_id only; a peer
 * of another endpoint naming its rkey gets the same answer as for a key
 * that does not exist. The rkey is 64 random bits, never 0.
 */
struct usnic_rel_reg_mr {
	__u32 size;
	__u32 flags;		/* zero */
	__u64 addr;		/* in: user virtual address */
	__u64 length;		/* in: bytes, non-zero */
	__u32 access;		/* in: USNIC_REL_ACCESS_* */
	__u32 ep_id;		/* in: the endpoint peers reach it through */
	__u64 rkey;		/* out: random key naming the registration */
	__u64 reserved[2];	/* zero */
};

/*
 * DEREG_MR: when it returns, no peer reads or writes the memory any more: an
 * operation under way is cut off (a GET being answered completes at its
 * origin with -EPERM) and the pages are unpinned once it let go of them.
 */
struct usnic_rel_dereg_mr {
	__u32 size;
	__u32 flags;		/* zero */
	__u64 rkey;
};

/* DOORBELL: the kernel consumes the named send rings (command first). */
#define USNIC_REL_DB_SQ_CMD	(1U << USNIC_REL_CHAN_CMD)
#define USNIC_REL_DB_SQ_DATA	(1U << USNIC_REL_CHAN_DATA)
#define USNIC_REL_DB_RX		(1U << 8)	/* receive buffers were returned */
#define USNIC_REL_DB_ALL	(USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA | USNIC_REL_DB_RX)

struct usnic_rel_doorbell {
	__u32 size;
	__u32 flags;		/* zero */
	__u32 ep_id;
	__u32 rings;		/* USNIC_REL_DB_*, non-zero */
};

#define USNIC_REL_IOC_MAGIC	0xB7
#define USNIC_REL_IOC_GET_ABI	_IOR(USNIC_REL_IOC_MAGIC, 0x00, struct usnic_rel_abi_info)
#define USNIC_REL_IOC_CREATE_EP	_IOWR(USNIC_REL_IOC_MAGIC, 0x01, struct usnic_rel_create_ep)
#define USNIC_REL_IOC_DESTROY_EP _IOW(USNIC_REL_IOC_MAGIC, 0x02, struct usnic_rel_destroy_ep)
#define USNIC_REL_IOC_AV_INSERT	_IOWR(USNIC_REL_IOC_MAGIC, 0x03, struct usnic_rel_av_insert)
#define USNIC_REL_IOC_AV_REMOVE	_IOW(USNIC_REL_IOC_MAGIC, 0x04, struct usnic_rel_av_remove)
#define USNIC_REL_IOC_REG_MR	_IOWR(USNIC_REL_IOC_MAGIC, 0x05, struct usnic_rel_reg_mr)
#define USNIC_REL_IOC_DEREG_MR	_IOW(USNIC_REL_IOC_MAGIC, 0x06, struct usnic_rel_dereg_mr)
#define USNIC_REL_IOC_DOORBELL	_IOW(USNIC_REL_IOC_MAGIC, 0x07, struct usnic_rel_doorbell)

#endif /* _UAPI_USNIC_REL_H */
