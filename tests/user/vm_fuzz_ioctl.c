// SPDX-License-Identifier: MIT
/*
 * In-VM test: random ioctls, mmaps and ring indices against a real
 * /dev/usnic_rel with live endpoints. Command numbers (valid, with other
 * sizes or directions, and invalid), argument sizes, flags and fields are
 * random, and so are the argument pointers: NULL, unmapped, read-only,
 * straddling the end of a mapping, kernel addresses. Between ioctls the
 * rings' head and tail indices and their descriptors are overwritten at
 * random and doorbells rung, and real sends and one-sided operations on a
 * registration are mixed in. The process must survive, the kernel must log
 * nothing (the harness scans its log) and, at the end, new endpoints must
 * still carry a message.
 *
 * VM_FUZZ_SEED (default printed) and VM_FUZZ_ITERS override the run.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "urt.h"
#include "urt_ep.h"

#define MAX_EPS 8
#define ARG_BYTES 8192

static uint64_t rng_state;
static long page_size;
static char *rw_page; /* two pages: random argument bytes */
static char *ro_page; /* read-only, holds plausible arguments */
static char *edge; /* last page before an unmapped one */
static char *unmapped; /* a page that was unmapped */
static char *target; /* registered: one-sided operations land here */
static uint64_t target_rkey;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed alone. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* A 32-bit value biased towards the edges where bugs live. */
static uint32_t rnd_u32(void)
{
	static const uint32_t edges[] = { 0,	     1,	    2,		3,	    7,
					  8,	     15,    16,		63,	    64,
					  255,	     256,   4095,	4096,	    4097,
					  65535,     65536, 0x7fffffff, 0x80000000, 0xfffffffe,
					  0xffffffff };

	switch (rnd_below(3)) {
	case 0:
		return edges[rnd_below(sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return rnd_below(64);
	default:
		return (uint32_t)rnd();
	}
}

static struct urt_ep eps[MAX_EPS];
static int nr_eps;
/* The first two endpoints carry the traffic: destroyed only near the end. */
static int protect_main = 1;

static uint32_t rnd_ep_id(void)
{
	if (nr_eps && rnd_below(4))
		return eps[rnd_below(nr_eps)].info.ep_id;
	return rnd_u32();
}

static const unsigned long valid_cmds[] = {
	USNIC_REL_IOC_GET_ABI,	 USNIC_REL_IOC_CREATE_EP, USNIC_REL_IOC_DESTROY_EP,
	USNIC_REL_IOC_AV_INSERT, USNIC_REL_IOC_AV_REMOVE, USNIC_REL_IOC_REG_MR,
	USNIC_REL_IOC_DEREG_MR,	 USNIC_REL_IOC_DOORBELL,
};
#define NR_VALID (sizeof(valid_cmds) / sizeof(valid_cmds[0]))
/* The module matches commands without their size field. */
#define IOC_BASE(cmd) ((cmd) & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT))

static unsigned long rnd_cmd(unsigned int *which)
{
	unsigned long cmd;

	*which = rnd_below(NR_VALID);
	cmd = valid_cmds[*which];
	switch (rnd_below(6)) {
	case 0: /* another size in the number */
		return (cmd & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		       ((unsigned long)rnd_below(_IOC_SIZEMASK + 1) << _IOC_SIZESHIFT);
	case 1: /* another direction */
		return (cmd & ~((unsigned long)_IOC_DIRMASK << _IOC_DIRSHIFT)) |
		       ((unsigned long)rnd_below(4) << _IOC_DIRSHIFT);
	case 2: /* our magic, any number */
		*which = NR_VALID;
		return _IOC(rnd_below(4), USNIC_REL_IOC_MAGIC, rnd_below(256), rnd_below(512));
	case 3: /* anything */
		*which = NR_VALID;
		return (uint32_t)rnd();
	default:
		return cmd;
	}
}

static size_t arg_size(unsigned int which)
{
	static const size_t sizes[] = {
		sizeof(struct usnic_rel_abi_info),   sizeof(struct usnic_rel_create_ep),
		sizeof(struct usnic_rel_destroy_ep), sizeof(struct usnic_rel_av_insert),
		sizeof(struct usnic_rel_av_remove),  sizeof(struct usnic_rel_reg_mr),
		sizeof(struct usnic_rel_dereg_mr),   sizeof(struct usnic_rel_doorbell),
	};

	return which < NR_VALID ? sizes[which] : 64;
}

/* Fill @buf with a plausible argument of command @which, then damage it. */
static void make_arg(unsigned int which, void *buf, size_t len)
{
	uint32_t *w = buf;
	size_t n = arg_size(which);
	/* 0: random words; 1: plausible; 2: plausible with one word damaged */
	unsigned int mode = rnd_below(3);

	for (size_t i = 0; i < len / 4; i++)
		w[i] = mode ? 0 : rnd_u32();
	if (mode || rnd_below(4)) {
		/* size: exact, short, long with a zero or non-zero tail, huge */
		static const int delta[] = { 0, 0, 0, -4, -1, 8, 16 };

		w[0] = (uint32_t)(n + delta[mode ? 0 : rnd_below(7)]);
		if (!mode && !rnd_below(8))
			w[0] = rnd_below(2) ? page_size : page_size + 1;
	}
	if (mode || rnd_below(2))
		w[1] = 0; /* flags */
	switch (which) {
	case 1: { /* CREATE_EP */
		struct usnic_rel_create_ep *c = buf;

		if (mode || rnd_below(2)) {
			urt_addr(&c->addr, rnd_below(4) ? AF_INET : AF_INET6,
				 rnd_below(2) ? "127.0.0.1" : "::1", 0);
			if (c->addr.family == AF_INET6 && rnd_below(2))
				urt_addr(&c->addr, AF_INET6, "::1", 0);
		}
		/* Keep accepted sizes small: every endpoint allocates them. */
		c->sq_entries = rnd_below(3) ? rnd_below(64) : rnd_u32();
		c->cq_entries = rnd_below(3) ? rnd_below(64) : rnd_u32();
		c->rx_bufs = rnd_below(3) ? rnd_below(16) : rnd_u32() | 0x10000;
		c->staging_size = rnd_below(3) ? rnd_below(1 << 16) : rnd_u32() | 0x8000000;
		break;
	}
	case 2:
	case 4:
	case 7:
		w[2] = rnd_ep_id();
		if (which == 7 && rnd_below(2))
			w[3] = rnd_below(1 << 9) & USNIC_REL_DB_ALL;
		if (which == 4 && rnd_below(2))
			w[3] = rnd_below(4); /* a peer handle that may exist */
		break;
	case 3: {
		struct usnic_rel_av_insert *a = buf;

		a->ep_id = rnd_ep_id();
		if (mode || rnd_below(2))
			urt_addr(&a->addr, rnd_below(2) ? AF_INET : AF_INET6,
				 rnd_below(2) ? "127.0.0.1" : "::1", rnd_below(2) ? 9 : rnd_u32());
		break;
	}
	case 5: {
		struct usnic_rel_reg_mr *m = buf;
		static const uint64_t kaddr[] = { 0, 0xffff888000000000ULL, 0xffffffff81000000ULL,
						  0x7ffffffff000ULL };

		switch (rnd_below(4)) {
		case 0:
			m->addr = (uintptr_t)rw_page + rnd_below(page_size);
			break;
		case 1:
			m->addr = (uintptr_t)ro_page;
			break;
		case 2:
			m->addr = (uintptr_t)unmapped;
			break;
		default:
			m->addr = kaddr[rnd_below(4)];
		}
		m->length = rnd_below(2) ? rnd_below(3 * page_size) : rnd();
		m->access = rnd_below(2) ? rnd_below(16) : rnd_u32();
		m->ep_id =
			nr_eps && rnd_below(2) ? eps[rnd_below(nr_eps)].info.ep_id : rnd_below(8);
		break;
	}
	default:
		break;
	}
	if (mode == 2)
		w[rnd_below(n / 4)] ^= 1U << rnd_below(32);
	if (which == 2 && protect_main && nr_eps >= 2 &&
	    (w[2] == eps[0].info.ep_id || w[2] == eps[1].info.ep_id))
		w[2] = 0;
}

/* Pick where the argument lives; fills it when it can be written. */
static void *arg_ptr(unsigned int which)
{
	static const uintptr_t kaddr[] = { 0xffff888000000000ULL, 0xffffffff81000000ULL,
					   0xfffffffffffff000ULL, 0x8000000000000000ULL };
	size_t n = arg_size(which) + 16;

	switch (rnd_below(12)) {
	case 0:
		return NULL;
	case 1:
		return unmapped + rnd_below(page_size);
	case 2:
		return ro_page + 8 * rnd_below(8);
	case 3:
		return (void *)kaddr[rnd_below(4)];
	case 4: /* the struct runs into the unmapped page after @edge */
		make_arg(which, edge + page_size - n, n);
		return edge + page_size - n + rnd_below(n);
	case 5:
		return (void *)(uintptr_t)rnd();
	default:
		make_arg(which, rw_page, ARG_BYTES);
		return rw_page;
	}
}

/* Remember a successfully created endpoint, or destroy it when full. */
static void note_create(int fd, void *p)
{
	struct usnic_rel_create_ep *c = p;
	struct usnic_rel_destroy_ep d = { .size = sizeof(d), .ep_id = c->ep_id };

	/* Only endpoints created by the plain writable argument are known. */
	if (p != rw_page || nr_eps == MAX_EPS || rnd_below(2)) {
		if (p == rw_page)
			ioctl(fd, USNIC_REL_IOC_DESTROY_EP, &d);
		return;
	}
	memset(&eps[nr_eps], 0, sizeof(eps[nr_eps]));
	eps[nr_eps].fd = fd;
	eps[nr_eps].info = *c;
	nr_eps++;
}

/* Successful ioctls per command (the last one: any other number). */
static long ok_count[NR_VALID + 1], tried_count[NR_VALID + 1];

static void fuzz_ioctl(int fd)
{
	unsigned int which;
	unsigned long cmd = rnd_cmd(&which);
	void *p = arg_ptr(which);
	int ret = ioctl(fd, cmd, p);

	tried_count[which]++;
	if (ret < 0)
		return;
	ok_count[which]++;
	if (IOC_BASE(cmd) == IOC_BASE(USNIC_REL_IOC_CREATE_EP))
		note_create(fd, p);
	else if (IOC_BASE(cmd) == IOC_BASE(USNIC_REL_IOC_REG_MR) && p == rw_page) {
		struct usnic_rel_dereg_mr d = {
			.size = sizeof(d),
			.rkey = ((struct usnic_rel_reg_mr *)p)->rkey,
		};

		/* Pinned memory is charged: give it back (or not, sometimes). */
		if (rnd_below(4))
			ioctl(fd, USNIC_REL_IOC_DEREG_MR, &d);
	} else if (IOC_BASE(cmd) == IOC_BASE(USNIC_REL_IOC_DESTROY_EP) && p == rw_page) {
		uint32_t id = ((struct usnic_rel_destroy_ep *)p)->ep_id;

		for (int i = 0; i < nr_eps; i++)
			if (eps[i].info.ep_id == id && !eps[i].region[0])
				eps[i] = eps[--nr_eps];
	}
}

/* mmap at random offsets, sizes and protections; unmapped right away. */
static void fuzz_mmap(int fd)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
				     PROT_READ | PROT_EXEC, PROT_NONE };
	off_t off;
	size_t len = (size_t)(1 + rnd_below(8)) * page_size;
	void *m;

	if (nr_eps && rnd_below(2))
		off = (off_t)((uint64_t)eps[rnd_below(nr_eps)].info.ep_id << 3 | rnd_below(8))
		      << 12;
	else
		off = (off_t)(rnd() & 0xfffffffffff000ULL);
	if (!rnd_below(4))
		len = (size_t)rnd_below(1 << 26);
	m = mmap(NULL, len, prots[rnd_below(5)], rnd_below(4) ? MAP_SHARED : MAP_PRIVATE, fd, off);
	if (m != MAP_FAILED)
		munmap(m, len);
}

/* Scribble on a mapped ring of a mapped endpoint, then ring its doorbell. */
static void fuzz_ring(void)
{
	static const int rings[] = { USNIC_REL_REGION_SQ_CMD, USNIC_REL_REGION_SQ_DATA,
				     USNIC_REL_REGION_CQ, USNIC_REL_REGION_RX_FREE };
	struct urt_ep *ep;
	int r, tries = 0;

	/* Scribbling stops a ring for good: spare the traffic pair until the end. */
	do {
		if (nr_eps < 4 || tries++ > 8)
			return;
		ep = &eps[protect_main ? 2 + rnd_below(2) : rnd_below(nr_eps)];
	} while (!ep->region[0]);
	r = rings[rnd_below(4)];
	switch (rnd_below(5)) {
	case 0:
		__atomic_store_n(urt_ring_tail(ep, r), rnd_u32(), __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(urt_ring_head(ep, r), rnd_u32(), __ATOMIC_RELEASE);
		break;
	case 2: /* a plausible step forward */
		__atomic_store_n(urt_ring_tail(ep, r),
				 *urt_ring_tail(ep, r) + rnd_below(ep->info.region[r].entries + 2),
				 __ATOMIC_RELEASE);
		break;
	default: { /* random descriptor contents, some of them almost right */
		uint32_t entries = ep->info.region[r].entries;
		size_t esz = r == USNIC_REL_REGION_CQ	     ? sizeof(struct usnic_rel_cqe)
			     : r == USNIC_REL_REGION_RX_FREE ? sizeof(uint32_t)
							     : sizeof(struct usnic_rel_sqe);
		uint32_t *slot = urt_ring_slot(ep, r, rnd_below(entries), esz);

		for (size_t i = 0; i < esz / 4; i++)
			slot[i] = rnd_below(3) ? rnd_below(4) : rnd_u32();
		if (esz == sizeof(struct usnic_rel_sqe) && rnd_below(2)) {
			struct usnic_rel_sqe *s = (struct usnic_rel_sqe *)slot;

			s->opcode = rnd_below(6);
			s->flags = rnd_below(3);
			s->reserved0 = 0;
			s->reserved2[0] = s->reserved2[1] = 0;
			/* One-sided: the registration, or any key; in or out of it. */
			s->rkey = rnd_below(2) ? target_rkey : rnd();
			s->remote_off = rnd_below(2) ? rnd_below(3 * page_size) : rnd();
			s->atomic.atomic_op = rnd_below(5);
			s->atomic.atomic_size = rnd_below(2) ? 4 : 8;
			s->len = rnd_below(3) ? rnd_below(70000) : rnd_u32();
			s->staging_off =
				rnd_below(2) ? rnd_below(ep->info.staging_size + 2) : rnd_u32();
		}
		__atomic_store_n(urt_ring_tail(ep, r), *urt_ring_tail(ep, r) + 1, __ATOMIC_RELEASE);
	}
	}
	urt_doorbell(ep, rnd_below(2) ? (uint32_t)USNIC_REL_DB_ALL : rnd_u32());
}

/* A real send from the first endpoint, and completions taken on both. */
static void fuzz_traffic(long i)
{
	struct usnic_rel_sqe sqe = {
		.opcode = USNIC_REL_OP_SEND,
		.flags = USNIC_REL_SQE_INLINE,
		.peer = 1,
		.imm = i,
		.len = 4,
	};
	struct usnic_rel_cqe cqe;

	if (!eps[0].region[0] || !eps[1].region[0])
		return;
	memcpy(sqe.inline_data, "fuzz", 4);
	/* Now and then a plausible one-sided operation on the registration. */
	switch (rnd_below(8)) {
	case 0:
		sqe.opcode = USNIC_REL_OP_PUT;
		sqe.rkey = target_rkey;
		sqe.remote_off = rnd_below(2 * page_size);
		break;
	case 1:
		sqe.opcode = USNIC_REL_OP_GET;
		sqe.flags = 0;
		sqe.rkey = target_rkey;
		sqe.remote_off = rnd_below(2 * page_size);
		sqe.len = 1 + rnd_below(3000);
		break;
	case 2:
		sqe.opcode = USNIC_REL_OP_ATOMIC;
		sqe.flags = 0;
		sqe.rkey = target_rkey;
		sqe.len = 8;
		sqe.remote_off = 8 * rnd_below(page_size / 4);
		sqe.atomic.atomic_op = 1 + rnd_below(3);
		sqe.atomic.atomic_size = 8;
		sqe.atomic.operand[0] = rnd_below(3) == 2 ? rnd() : 1;
		sqe.atomic.operand[1] = sqe.atomic.atomic_op == 1 ? 0 : rnd();
		break;
	default:
		break;
	}
	urt_queue_sqe(&eps[0], rnd_below(2), &sqe);
	urt_doorbell(&eps[0], USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA);
	/*
	 * Take completions without poll(), which answers for the whole file,
	 * and a bounded number: a scribbled head makes a ring look never empty.
	 */
	for (int e = 0; e < 2; e++) {
		for (int n = 0; n < 16; n++) {
			uint32_t *head = urt_ring_head(&eps[e], USNIC_REL_REGION_CQ);
			uint32_t h = *head;

			if (h == __atomic_load_n(urt_ring_tail(&eps[e], USNIC_REL_REGION_CQ),
						 __ATOMIC_ACQUIRE))
				break;
			memcpy(&cqe, urt_ring_slot(&eps[e], USNIC_REL_REGION_CQ, h, sizeof(cqe)),
			       sizeof(cqe));
			__atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
			if (e == 1 && cqe.opcode == USNIC_REL_OP_RECV)
				urt_post_rx(&eps[1], cqe.buf);
		}
	}
	urt_doorbell(&eps[1], USNIC_REL_DB_RX);
}

/* After all that: a fresh pair of endpoints still carries a message. */
static void check_usable(void)
{
	struct usnic_rel_cqe cqe;
	struct urt_ep a, b;
	int fd = open("/dev/usnic_rel", O_RDWR), peer;

	URT_CHECK(fd >= 0);
	if (fd < 0)
		return;
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &b), 0);
	if (urt_failures)
		return;
	peer = urt_av_insert(&a, AF_INET, "127.0.0.1", b.info.addr.port);
	URT_CHECK(peer > 0);
	URT_CHECK(urt_av_insert(&b, AF_INET, "127.0.0.1", a.info.addr.port) > 0);
	urt_post_all_rx(&b);
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_DATA, peer, "still alive", 12, 42, 7), 0);
	URT_CHECK_EQ(urt_cq_next(&b, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.imm, 42);
	URT_CHECK_EQ(cqe.len, 12);
	URT_CHECK(!memcmp(urt_rx_buf(&b, cqe.buf), "still alive", 12));
	URT_CHECK_EQ(urt_cq_next(&a, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.status, 0);
	URT_CHECK_EQ(cqe.user_ctx, 7);
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	URT_CHECK_EQ(urt_ep_destroy(&b), 0);
	close(fd);
}

/* How deep the run went (random: reported, not checked). */
static void report_depth(void)
{
	printf("vm_fuzz_ioctl: ep0 rdma_started %lld rdma_failed %lld bad_sqe %lld ring_corrupt "
	       "%lld;"
	       " ep1 rdma_served %lld rdma_bad_rkey %lld rdma_refused %lld rx_messages %lld\n",
	       urt_counter(eps[0].info.debug_id, "rdma_started"),
	       urt_counter(eps[0].info.debug_id, "rdma_failed"),
	       urt_counter(eps[0].info.debug_id, "bad_sqe"),
	       urt_counter(eps[0].info.debug_id, "ring_corrupt"),
	       urt_counter(eps[1].info.debug_id, "rdma_served"),
	       urt_counter(eps[1].info.debug_id, "rdma_bad_rkey"),
	       urt_counter(eps[1].info.debug_id, "rdma_refused"),
	       urt_counter(eps[1].info.debug_id, "rx_messages"));
}

int main(void)
{
	const char *s = getenv("VM_FUZZ_SEED"), *n = getenv("VM_FUZZ_ITERS");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 0x75736e6963ULL;
	long iters = n ? atol(n) : 50000;
	char *area;
	int fd;

	page_size = sysconf(_SC_PAGESIZE);
	printf("vm_fuzz_ioctl: seed 0x%llx (VM_FUZZ_SEED), %ld iterations (VM_FUZZ_ITERS)\n",
	       (unsigned long long)seed, iters);
	fflush(stdout);
	rng_state = seed ? seed : 1;

	/* rw(2) | ro | edge | hole */
	area = mmap(NULL, 5 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	URT_CHECK(area != MAP_FAILED);
	if (area == MAP_FAILED)
		return urt_done("vm_fuzz_ioctl");
	rw_page = area;
	ro_page = area + 2 * page_size;
	edge = area + 3 * page_size;
	unmapped = area + 4 * page_size;
	target = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	URT_CHECK(target != MAP_FAILED);
	if (target == MAP_FAILED)
		return urt_done("vm_fuzz_ioctl");
	make_arg(1, ro_page, page_size);
	((struct usnic_rel_create_ep *)ro_page)->size = sizeof(struct usnic_rel_create_ep);
	((struct usnic_rel_create_ep *)ro_page)->sq_entries = 0;
	((struct usnic_rel_create_ep *)ro_page)->rx_bufs = 4;
	urt_addr(&((struct usnic_rel_create_ep *)ro_page)->addr, AF_INET, "127.0.0.1", 0);
	mprotect(ro_page, page_size, PROT_READ);
	munmap(unmapped, page_size);

	fd = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_fuzz_ioctl");
	/*
	 * Two mapped endpoints that know each other carry real traffic; two
	 * more, also mapped, have their rings scribbled on.
	 */
	for (int i = 0; i < 4; i++)
		URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &eps[nr_eps++]), 0);
	if (urt_failures)
		return urt_done("vm_fuzz_ioctl");
	URT_CHECK(urt_av_insert(&eps[0], AF_INET, "127.0.0.1", eps[1].info.addr.port) > 0);
	{
		struct usnic_rel_reg_mr mr = {
			.size = sizeof(mr),
			.addr = (uintptr_t)target,
			.length = 2 * page_size,
			.access = USNIC_REL_ACCESS_ALL,
			.ep_id = eps[1].info.ep_id,
		};

		URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &mr), 0);
		target_rkey = mr.rkey;
	}
	URT_CHECK(urt_av_insert(&eps[1], AF_INET, "127.0.0.1", eps[0].info.addr.port) > 0);
	urt_post_all_rx(&eps[1]);
	URT_CHECK(urt_av_insert(&eps[2], AF_INET, "127.0.0.1", eps[3].info.addr.port) > 0);
	URT_CHECK(urt_av_insert(&eps[3], AF_INET, "127.0.0.1", eps[2].info.addr.port) > 0);
	urt_post_all_rx(&eps[3]);

	for (long i = 0; i < iters; i++) {
		switch (rnd_below(10)) {
		case 0:
			fuzz_mmap(fd);
			break;
		case 1:
		case 2:
			fuzz_ring();
			break;
		case 3:
			fuzz_traffic(i);
			break;
		default:
			fuzz_ioctl(fd);
		}
		if (i == iters - iters / 10) {
			report_depth();
			protect_main = 0;
		}
		if (i % 5000 == 4999) {
			printf("vm_fuzz_ioctl: %ld iterations, %d endpoints known\n", i + 1,
			       nr_eps);
			fflush(stdout);
		}
	}
	for (unsigned int c = 0; c <= NR_VALID; c++)
		printf("vm_fuzz_ioctl: command %u: %ld of %ld succeeded\n", c, ok_count[c],
		       tried_count[c]);
	for (int i = 0; i < nr_eps; i++)
		urt_ep_unmap(&eps[i]);
	close(fd);
	check_usable();
	return urt_done("vm_fuzz_ioctl");
}
