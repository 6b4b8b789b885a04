// SPDX-License-Identifier: MIT
/*
 * In-VM test: endpoints on lo (IPv4 and IPv6) are created, mapped and
 * destroyed; every malformed ioctl argument and mmap request is refused.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

static void check_create(int fd, int family, const char *ip)
{
	struct urt_ep ep;
	int ret;

	ret = urt_ep_create(fd, family, ip, 0, &ep);
	URT_CHECK_EQ(ret, 0);
	if (ret)
		return;
	URT_CHECK(ep.info.ep_id > 0);
	URT_CHECK(ep.info.addr.port != 0);
	URT_CHECK(ep.info.incarnation != 0);
	URT_CHECK_EQ(ep.info.sq_entries, 256);
	URT_CHECK_EQ(ep.info.region[USNIC_REL_REGION_SQ_CMD].entries, 256);
	URT_CHECK_EQ(ep.info.region[USNIC_REL_REGION_RX_FREE].entries, ep.info.rx_bufs);
	URT_CHECK(ep.info.mtu[USNIC_REL_CHAN_CMD] == 768);
	URT_CHECK(ep.info.mtu[USNIC_REL_CHAN_DATA] > 1000);
	URT_CHECK(ep.info.rx_buf_size >= ep.info.mtu[USNIC_REL_CHAN_DATA]);
	URT_CHECK(urt_counter(ep.info.debug_id, "tx_packets") == 0);

	/* The same port twice is refused by the stack. */
	struct urt_ep ep2;

	URT_CHECK_EQ(urt_ep_create(fd, family, ip, ep.info.addr.port, &ep2), -EADDRINUSE);
	URT_CHECK_EQ(urt_ep_destroy(&ep), 0);
	/* Destroyed: its id and its port are free. */
	URT_CHECK_EQ(urt_ep_destroy(&ep), -EINVAL);
	ret = urt_ep_create(fd, family, ip, ep.info.addr.port, &ep2);
	URT_CHECK_EQ(ret, 0);
	if (!ret)
		URT_CHECK_EQ(urt_ep_destroy(&ep2), 0);
}

static void check_bad_create(int fd)
{
	struct usnic_rel_create_ep c;
	char big[sizeof(c) + 64];

#define RESET()                                                                                    \
	do {                                                                                       \
		memset(&c, 0, sizeof(c));                                                          \
		c.size = sizeof(c);                                                                \
		urt_addr(&c.addr, AF_INET, "127.0.0.1", 0);                                        \
	} while (0)
	RESET();
	c.flags = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.reserved[3] = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.addr.reserved = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.addr.family = AF_UNIX;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.addr.addr[7] = 1; /* IPv4 with bytes past the address */
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.size = 8;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.size = 1 << 20;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.sq_entries = 1 << 20;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	c.staging_size = 1U << 31;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c), -EINVAL);
	RESET();
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, (void *)8), -EFAULT);

	/* A newer caller's larger struct: fine while the tail is zero. */
	RESET();
	memset(big, 0, sizeof(big));
	c.size = sizeof(big);
	c.sq_entries = 100; /* rounded up to a power of two */
	memcpy(big, &c, sizeof(c));
	big[sizeof(big) - 1] = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, big), -EINVAL);
	big[sizeof(big) - 1] = 0;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, big), 0);
	memcpy(&c, big, sizeof(c));
	URT_CHECK_EQ(c.sq_entries, 128);
	struct usnic_rel_destroy_ep d = { .size = sizeof(d), .ep_id = c.ep_id };

	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DESTROY_EP, &d), 0);
#undef RESET
}

static void check_bad_ids(int fd)
{
	struct usnic_rel_destroy_ep d = { .size = sizeof(d), .ep_id = 999 };
	struct usnic_rel_av_remove r = { .size = sizeof(r) };
	struct usnic_rel_doorbell db = { .size = sizeof(db) };
	struct urt_ep ep;
	int peer;

	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DESTROY_EP, &d), -EINVAL);
	d.ep_id = 0;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DESTROY_EP, &d), -EINVAL);
	if (urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &ep)) {
		URT_CHECK(0);
		return;
	}
	d.ep_id = ep.info.ep_id;
	d.reserved = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DESTROY_EP, &d), -EINVAL);

	/* Address vector. */
	peer = urt_av_insert(&ep, AF_INET, "127.0.0.1", 4000);
	URT_CHECK(peer > 0);
	URT_CHECK_EQ(urt_av_insert(&ep, AF_INET, "127.0.0.1", 4000), -EEXIST);
	URT_CHECK_EQ(urt_av_insert(&ep, AF_INET6, "::1", 4000), -EINVAL);
	URT_CHECK_EQ(urt_av_insert(&ep, AF_INET, "127.0.0.1", 0), -EINVAL);
	URT_CHECK_EQ(urt_av_insert(&ep, AF_INET, "224.0.0.1", 4000), -EINVAL);
	struct usnic_rel_av_insert av = { .size = sizeof(av), .ep_id = 999 };

	urt_addr(&av.addr, AF_INET, "127.0.0.1", 4001);
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_AV_INSERT, &av), -EINVAL);
	av.ep_id = ep.info.ep_id;
	av.reserved[1] = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_AV_INSERT, &av), -EINVAL);
	r.ep_id = ep.info.ep_id;
	r.peer = peer + 100;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_AV_REMOVE, &r), -EINVAL);
	r.peer = peer;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_AV_REMOVE, &r), 0);
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_AV_REMOVE, &r), -EINVAL);

	/* Doorbells. */
	db.ep_id = 999;
	db.rings = USNIC_REL_DB_SQ_CMD;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DOORBELL, &db), -EINVAL);
	db.ep_id = ep.info.ep_id;
	db.rings = 0;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DOORBELL, &db), -EINVAL);
	db.rings = 4;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DOORBELL, &db), -EINVAL);
	db.rings = USNIC_REL_DB_SQ_CMD;
	db.flags = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_DOORBELL, &db), -EINVAL);
	URT_CHECK_EQ(urt_doorbell(&ep, USNIC_REL_DB_SQ_CMD | USNIC_REL_DB_SQ_DATA), 0);

	/* Bad SQEs complete with an error and are counted, never sent. */
	struct usnic_rel_sqe sqe = { .opcode = USNIC_REL_OP_SEND,
				     .peer = 77,
				     .flags = USNIC_REL_SQE_INLINE,
				     .len = 4,
				     .user_ctx = 1 };
	struct usnic_rel_cqe cqe;

	peer = urt_av_insert(&ep, AF_INET, "127.0.0.1", 4000);
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* unknown peer */
	sqe.peer = peer;
	sqe.user_ctx = 2;
	sqe.opcode = 99;
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* bad opcode */
	sqe.opcode = USNIC_REL_OP_SEND;
	sqe.user_ctx = 3;
	sqe.len = USNIC_REL_SQE_INLINE_MAX + 1;
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* inline too long */
	sqe.flags = 0;
	sqe.user_ctx = 4;
	sqe.len = 100;
	sqe.staging_off = ep.info.staging_size - 50;
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* past staging */
	sqe.user_ctx = 5;
	sqe.staging_off = 0;
	sqe.len = ep.info.max_msg[USNIC_REL_CHAN_CMD] + 1;
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* over the maximum */
	sqe.user_ctx = 6;
	sqe.len = 8;
	sqe.reserved2[0] = 1;
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* reserved */
	sqe.user_ctx = 7;
	sqe.reserved2[0] = 0;
	sqe.opcode = USNIC_REL_OP_PUT;
	sqe.len = 0;
	urt_queue_sqe(&ep, USNIC_REL_CHAN_CMD, &sqe); /* an empty put */
	URT_CHECK_EQ(urt_doorbell(&ep, USNIC_REL_DB_SQ_CMD), 7);
	int want[] = { -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EMSGSIZE, -EINVAL, -EINVAL };

	for (int i = 0; i < 7; i++) {
		URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 1000), 0);
		URT_CHECK_EQ(cqe.user_ctx, i + 1);
		URT_CHECK_EQ(cqe.status, want[i]);
	}
	URT_CHECK_EQ(urt_cq_next(&ep, &cqe, 0), -ETIMEDOUT);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "bad_sqe"), 7);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "tx_packets"), 0);
	URT_CHECK_EQ(urt_ep_destroy(&ep), 0);
}

static void check_mmap(int fd)
{
	struct urt_ep ep;
	void *p;

	if (urt_ep_create(fd, AF_INET6, "::1", 0, &ep)) {
		URT_CHECK(0);
		return;
	}
	for (int i = 0; i < USNIC_REL_NR_REGIONS; i++) {
		URT_CHECK(ep.region[i] != NULL);
		URT_CHECK(ep.info.region[i].size > 0);
		URT_CHECK_EQ(ep.info.region[i].size % 4096, 0);
	}
	off_t off = (off_t)ep.info.region[USNIC_REL_REGION_CQ].offset;
	size_t size = ep.info.region[USNIC_REL_REGION_CQ].size;

	/* Too long, private, executable, unknown region, unknown ep. */
	p = mmap(NULL, size + 4096, PROT_READ, MAP_SHARED, fd, off);
	URT_CHECK(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, off);
	URT_CHECK(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, off);
	URT_CHECK(p == MAP_FAILED);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		 off + 7 * 4096 - (off_t)(USNIC_REL_REGION_CQ * 4096));
	URT_CHECK(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)500 << 15);
	URT_CHECK(p == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)1 << 40);
	URT_CHECK(p == MAP_FAILED);

	/* A mapping outlives DESTROY_EP and still reads the rings. */
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off);
	URT_CHECK(p != MAP_FAILED);
	URT_CHECK_EQ(urt_ep_destroy(&ep), 0);
	if (p != MAP_FAILED) {
		URT_CHECK_EQ(*(volatile uint32_t *)p, 0);
		munmap(p, size);
	}
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off);
	URT_CHECK(p == MAP_FAILED && errno == EINVAL);
}

/* CREATE_EP binds as the caller would: no privileged port without the right. */
static void check_privileged_port(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct urt_ep ep;
		int fd;

		/* Opened first: the node is root's (vm_limits covers that). */
		fd = open("/dev/usnic_rel", O_RDWR);
		if (fd < 0)
			exit(3);
		if (setgid(65534) || setuid(65534))
			exit(2);
		if (urt_ep_create(fd, AF_INET, "127.0.0.1", 80, &ep) != -EACCES)
			exit(4);
		if (urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &ep))
			exit(5);
		exit(0);
	}
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status));
	URT_CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	int fd = open("/dev/usnic_rel", O_RDWR);

	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_ep");
	check_create(fd, AF_INET, "127.0.0.1");
	check_create(fd, AF_INET6, "::1");
	check_bad_create(fd);
	check_bad_ids(fd);
	check_mmap(fd);
	check_privileged_port();

	/* Endpoints left open are freed by close. */
	struct urt_ep a, b;

	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET6, "::", 0, &b), 0);
	URT_CHECK(a.info.ep_id != b.info.ep_id);
	urt_ep_unmap(&a);
	close(fd);
	urt_ep_unmap(&b);
	return urt_done("vm_ep");
}
