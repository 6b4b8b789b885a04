/* SPDX-License-Identifier: MIT */
/*
 * In-VM test helpers: endpoints, rings and messages through the raw ioctl
 * and mmap ABI of /dev/usnic_rel, so that the tests see exactly what the
 * module exposes. Functions return 0 or a negative errno like the library.
 */
#ifndef URT_EP_H
#define URT_EP_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <uapi/usnic_rel.h>

struct urt_ep {
	int fd;
	struct usnic_rel_create_ep info;
	void *region[USNIC_REL_NR_REGIONS];
	uint32_t staging_next; /* urt_send's next staging offset */
};

static inline int urt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static inline int urt_addr(struct usnic_rel_addr *a, int family, const char *ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->family = family;
	a->port = port;
	return inet_pton(family, ip, a->addr) == 1 ? 0 : -EINVAL;
}

static inline void urt_ep_unmap(struct urt_ep *ep)
{
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		if (ep->region[i])
			munmap(ep->region[i], ep->info.region[i].size);
		ep->region[i] = NULL;
	}
}

/* Create the endpoint @ep->info describes on @ep->fd and map all its regions. */
static inline int urt_ep_create_info(struct urt_ep *ep)
{
	int ret = urt_ioctl(ep->fd, USNIC_REL_IOC_CREATE_EP, &ep->info);

	if (ret)
		return ret;
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		void *p = mmap(NULL, ep->info.region[i].size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       ep->fd, (off_t)ep->info.region[i].offset);

		if (p == MAP_FAILED) {
			ret = -errno;
			urt_ep_unmap(ep);
			return ret;
		}
		ep->region[i] = p;
	}
	return 0;
}

/*
 * Create an endpoint on @fd bound to @ip:@port with receive buffers of
 * @rx_buf_size bytes (0: the default) and map all its regions.
 */
static inline int urt_ep_create_rx(int fd, int family, const char *ip, uint16_t port,
				   uint32_t rx_buf_size, struct urt_ep *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->fd = fd;
	ep->info.size = sizeof(ep->info);
	ep->info.rx_buf_size = rx_buf_size;
	if (urt_addr(&ep->info.addr, family, ip, port))
		return -EINVAL;
	return urt_ep_create_info(ep);
}

/* Create an endpoint on @fd bound to @ip:@port and map all its regions. */
static inline int urt_ep_create(int fd, int family, const char *ip, uint16_t port,
				struct urt_ep *ep)
{
	return urt_ep_create_rx(fd, family, ip, port, 0, ep);
}

static inline int urt_ep_destroy(struct urt_ep *ep)
{
	struct usnic_rel_destroy_ep d = {
		.size = sizeof(d),
		.ep_id = ep->info.ep_id,
	};

	urt_ep_unmap(ep);
	return urt_ioctl(ep->fd, USNIC_REL_IOC_DESTROY_EP, &d);
}

/* Insert a peer; returns its handle or a negative errno. */
static inline int urt_av_insert(struct urt_ep *ep, int family, const char *ip, uint16_t port)
{
	struct usnic_rel_av_insert av = {
		.size = sizeof(av),
		.ep_id = ep->info.ep_id,
	};
	int ret;

	if (urt_addr(&av.addr, family, ip, port))
		return -EINVAL;
	ret = urt_ioctl(ep->fd, USNIC_REL_IOC_AV_INSERT, &av);
	return ret ? ret : (int)av.peer;
}

static inline uint32_t *urt_ring_head(struct urt_ep *ep, int region)
{
	return (uint32_t *)((char *)ep->region[region] + USNIC_REL_RING_HEAD_OFF);
}

static inline uint32_t *urt_ring_tail(struct urt_ep *ep, int region)
{
	return (uint32_t *)((char *)ep->region[region] + USNIC_REL_RING_TAIL_OFF);
}

static inline void *urt_ring_slot(struct urt_ep *ep, int region, uint32_t idx, size_t size)
{
	uint32_t mask = ep->info.region[region].entries - 1;

	return (char *)ep->region[region] + USNIC_REL_RING_DESC_OFF + (size_t)(idx & mask) * size;
}

/* Give receive buffer @buf back to the kernel. */
static inline void urt_post_rx(struct urt_ep *ep, uint32_t buf)
{
	int r = USNIC_REL_REGION_RX_FREE;
	uint32_t tail = *urt_ring_tail(ep, r);

	*(uint32_t *)urt_ring_slot(ep, r, tail, sizeof(uint32_t)) = buf;
	__atomic_store_n(urt_ring_tail(ep, r), tail + 1, __ATOMIC_RELEASE);
}

static inline void urt_post_all_rx(struct urt_ep *ep)
{
	for (uint32_t i = 0; i < ep->info.rx_bufs; i++)
		urt_post_rx(ep, i);
}

static inline const void *urt_rx_buf(struct urt_ep *ep, uint32_t buf)
{
	return (char *)ep->region[USNIC_REL_REGION_RX_BUFS] + (size_t)buf * ep->info.rx_buf_size;
}

static inline int urt_doorbell(struct urt_ep *ep, uint32_t rings)
{
	struct usnic_rel_doorbell db = {
		.size = sizeof(db),
		.ep_id = ep->info.ep_id,
		.rings = rings,
	};
	int ret = ioctl(ep->fd, USNIC_REL_IOC_DOORBELL, &db);

	return ret < 0 ? -errno : ret;
}

/* Queue one SQE on channel @chan without ringing the doorbell. */
static inline void urt_queue_sqe(struct urt_ep *ep, int chan, const struct usnic_rel_sqe *sqe)
{
	int r = chan == USNIC_REL_CHAN_CMD ? USNIC_REL_REGION_SQ_CMD : USNIC_REL_REGION_SQ_DATA;
	uint32_t tail = *urt_ring_tail(ep, r);

	memcpy(urt_ring_slot(ep, r, tail, sizeof(*sqe)), sqe, sizeof(*sqe));
	__atomic_store_n(urt_ring_tail(ep, r), tail + 1, __ATOMIC_RELEASE);
}

/*
 * Send @len bytes to @peer on @chan: inline when small, else through the
 * staging area. A staged payload belongs to the kernel until its send
 * completes (a send parked behind a full window reads it later), so
 * successive sends take successive places, wrapping at the end: the tests
 * wait for their peer's answer long before a wrap comes back around.
 * Retries while the socket buffer is full.
 */
static inline int urt_send(struct urt_ep *ep, int chan, uint32_t peer, const void *buf,
			   uint32_t len, uint64_t imm, uint64_t user_ctx)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.peer = peer,
		.imm = imm,
		.user_ctx = user_ctx,
		.len = len,
	};
	int ret, tries;

	if (len <= USNIC_REL_SQE_INLINE_MAX) {
		sqe.flags = USNIC_REL_SQE_INLINE;
		if (len)
			memcpy(sqe.inline_data, buf, len);
	} else {
		uint64_t size = ep->info.region[USNIC_REL_REGION_STAGING].size;

		if ((uint64_t)ep->staging_next + len > size)
			ep->staging_next = 0;
		sqe.staging_off = ep->staging_next;
		ep->staging_next += (len + 63) & ~63U;
		memcpy((char *)ep->region[USNIC_REL_REGION_STAGING] + sqe.staging_off, buf, len);
	}
	urt_queue_sqe(ep, chan, &sqe);
	for (tries = 0; tries < 10000; tries++) {
		ret = urt_doorbell(ep, 1U << chan);
		if (ret)
			return ret < 0 ? ret : 0;
		usleep(100);
	}
	return -ETIMEDOUT;
}

/* Take the next CQE, waiting up to @timeout_ms with poll(); -ETIMEDOUT if none. */
static inline int urt_cq_next(struct urt_ep *ep, struct usnic_rel_cqe *cqe, int timeout_ms)
{
	int r = USNIC_REL_REGION_CQ;
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };

	for (;;) {
		uint32_t head = *urt_ring_head(ep, r);
		uint32_t tail = __atomic_load_n(urt_ring_tail(ep, r), __ATOMIC_ACQUIRE);

		if (head != tail) {
			memcpy(cqe, urt_ring_slot(ep, r, head, sizeof(*cqe)), sizeof(*cqe));
			__atomic_store_n(urt_ring_head(ep, r), head + 1, __ATOMIC_RELEASE);
			return 0;
		}
		int n = poll(&pfd, 1, timeout_ms);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
	}
}

/* Take the next CQE if there is one, without waiting. */
static inline bool urt_cq_take(struct urt_ep *ep, struct usnic_rel_cqe *cqe)
{
	int r = USNIC_REL_REGION_CQ;
	uint32_t head = *urt_ring_head(ep, r);

	if (head == __atomic_load_n(urt_ring_tail(ep, r), __ATOMIC_ACQUIRE))
		return false;
	memcpy(cqe, urt_ring_slot(ep, r, head, sizeof(*cqe)), sizeof(*cqe));
	__atomic_store_n(urt_ring_head(ep, r), head + 1, __ATOMIC_RELEASE);
	return true;
}

/*
 * Return receive buffer @buf, and ring USNIC_REL_DB_RX only if the kernel
 * asked for it; 0, or the doorbell's -errno.
 */
static inline int urt_rx_give_back(struct urt_ep *ep, uint32_t buf)
{
	urt_post_rx(ep, buf);
	/* Pairs with the kernel's barrier after it sets the flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n((uint32_t *)((char *)ep->region[USNIC_REL_REGION_RX_FREE] +
					   USNIC_REL_RING_TAIL_OFF + 4),
			      __ATOMIC_ACQUIRE) &
	      USNIC_REL_RING_F_NEED_DOORBELL))
		return 0;
	int ret = urt_doorbell(ep, USNIC_REL_DB_RX);

	return ret < 0 ? ret : 0;
}

/* Line "@name value" of endpoint @debug_id's debugfs @file; -1 if missing. */
static inline long long urt_debugfs_value(uint32_t debug_id, const char *file, const char *name)
{
	char path[96], key[64];
	long long val, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/%s", debug_id, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &val) == 2) {
		if (!strcmp(key, name))
			found = val;
	}
	fclose(f);
	return found;
}

/*
 * Write @value to fault-injection knob fault_@knob of endpoint @debug_id
 * (debugfs ep<N>/fault_<knob>); 0 or the negative errno of the write.
 */
static inline int urt_fault_set_str(uint32_t debug_id, const char *knob, const char *value)
{
	char path[96];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/fault_%s", debug_id, knob);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The same with a number. */
static inline int urt_fault_set(uint32_t debug_id, const char *knob, unsigned long long value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu\n", value);
	return urt_fault_set_str(debug_id, knob, buf);
}

/* Counter @name of endpoint @debug_id (debugfs ep<N>/counters); -1 if missing. */
static inline long long urt_counter(uint32_t debug_id, const char *name)
{
	return urt_debugfs_value(debug_id, "counters", name);
}

/* The number a small file holds (sysfs, debugfs, a test's own); -1 if missing. */
static inline long long urt_file_number(const char *path)
{
	long long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

/*
 * Counter @name of endpoint @debug_id from sysfs, which stays visible
 * inside a network namespace where debugfs is not mounted; -1 if missing.
 */
static inline long long urt_sysfs_counter(uint32_t debug_id, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/class/misc/usnic_rel/endpoints/ep%u/counters/%s",
		 debug_id, name);
	return urt_file_number(path);
}

/*
 * Copy debugfs file @name of every endpoint to stderr: what
 * a test prints when an operation hangs, for the reader of its log.
 */
static inline void urt_dump_debugfs(const char *name)
{
	char pattern[96], line[512];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "/sys/kernel/debug/usnic_rel/ep*/%s", name);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			fprintf(stderr, "%s: %s", g.gl_pathv[i], line);
		fclose(f);
	}
	globfree(&g);
}

/* AV_REMOVE of @peer on @ep: 0 or -errno. */
static inline int urt_av_remove(struct urt_ep *ep, uint32_t peer)
{
	struct usnic_rel_av_remove av = {
		.size = sizeof(av),
		.ep_id = ep->info.ep_id,
		.peer = peer,
	};

	return urt_ioctl(ep->fd, USNIC_REL_IOC_AV_REMOVE, &av);
}

/* Line @name of debugfs ep<N>/fault (what fault injection did); -1 if missing. */
static inline long long urt_fault_count(struct urt_ep *ep, const char *name)
{
	return urt_debugfs_value(ep->info.debug_id, "fault", name);
}

/* Deterministic payload byte @i of message @seq of @len bytes. */
static inline uint8_t urt_pattern(uint32_t seq, uint32_t len, uint32_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + len);
}

#endif /* URT_EP_H */
