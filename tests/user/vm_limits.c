// SPDX-License-Identifier: MIT
/*
 * In-VM test (limits.sh loads the module with max_eps_per_user=4): what a
 * user may hold is bounded, and each bound answers with the errno
 * usnic_rel(4) promises.
 *  - The node is root's (0600): nobody cannot open it (EACCES).
 *  - With access granted (chmod), nobody gets: EMFILE past RLIMIT_NOFILE
 *    endpoints in one file, EMFILE past max_eps_per_user over all its files
 *    (given back when they are destroyed), EINVAL for receive buffers or
 *    staging over their caps, ENOMEM for REG_MR over RLIMIT_MEMLOCK.
 *  - The rings cannot be made executable with mprotect() (EACCES); an
 *    endpoint's pid and incarnation in sysfs are root's to read.
 *  - An IPv6 datagram with a zero UDP checksum never reaches an endpoint;
 *    the same datagram with a checksum does.
 */
#include <grp.h>
#include <netinet/ip6.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

#define CAP 4

static int as_nobody(void)
{
	return setgroups(0, NULL) || setgid(65534) || setuid(65534) ? -1 : 0;
}

static int create(int fd, struct urt_ep *ep)
{
	return urt_ep_create(fd, AF_INET, "127.0.0.1", 0, ep);
}

static int create_sized(int fd, uint32_t rx_bufs, uint32_t staging)
{
	struct usnic_rel_create_ep c = { .size = sizeof(c),
					 .rx_bufs = rx_bufs,
					 .staging_size = staging };

	urt_addr(&c.addr, AF_INET, "127.0.0.1", 0);
	return urt_ioctl(fd, USNIC_REL_IOC_CREATE_EP, &c);
}

/* Runs as nobody once the node is open to all. */
static int limits_child(void)
{
	struct rlimit nofile = { .rlim_cur = 2, .rlim_max = 1024 };
	struct rlimit memlock = { .rlim_cur = 64 * 1024, .rlim_max = 64 * 1024 };
	struct urt_ep ep[CAP + 1];
	int fd, fd2;
	char *buf;

	if (as_nobody())
		return 2;
	fd = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_limits nobody");

	/* Caps on one endpoint's buffers, checked before anything is allocated. */
	URT_CHECK_EQ(create_sized(fd, 4097, 0), -EINVAL);
	URT_CHECK_EQ(create_sized(fd, 0, 64 * 1024 * 1024 + 1), -EINVAL);

	/* An endpoint is a socket: RLIMIT_NOFILE of them per file. */
	URT_CHECK_EQ(setrlimit(RLIMIT_NOFILE, &nofile), 0);
	URT_CHECK_EQ(create(fd, &ep[0]), 0);
	URT_CHECK_EQ(create(fd, &ep[1]), 0);
	URT_CHECK_EQ(create(fd, &ep[2]), -EMFILE);
	nofile.rlim_cur = 1024;
	URT_CHECK_EQ(setrlimit(RLIMIT_NOFILE, &nofile), 0);

	/* max_eps_per_user over all the user's files. */
	URT_CHECK_EQ(create(fd, &ep[2]), 0);
	fd2 = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd2 >= 0);
	URT_CHECK_EQ(create(fd2, &ep[3]), 0);
	URT_CHECK_EQ(create(fd2, &ep[4]), -EMFILE);
	URT_CHECK_EQ(create(fd, &ep[4]), -EMFILE);
	/* Destroyed and unmapped, an endpoint is given back. */
	URT_CHECK_EQ(urt_ep_destroy(&ep[3]), 0);
	URT_CHECK_EQ(create(fd, &ep[4]), 0);
	URT_CHECK_EQ(create(fd2, &ep[3]), -EMFILE);

	/* An endpoint's pid and incarnation are root's only, even to its owner. */
	{
		char path[96];

		snprintf(path, sizeof(path), "/sys/class/misc/usnic_rel/endpoints/ep%u/pid",
			 ep[0].info.debug_id);
		URT_CHECK_EQ(open(path, O_RDONLY), -1);
		URT_CHECK_EQ(errno, EACCES);
		snprintf(path, sizeof(path), "/sys/class/misc/usnic_rel/endpoints/ep%u/incarnation",
			 ep[0].info.debug_id);
		URT_CHECK_EQ(open(path, O_RDONLY), -1);
		URT_CHECK_EQ(errno, EACCES);
		snprintf(path, sizeof(path), "/sys/class/misc/usnic_rel/endpoints/ep%u/mtu_cmd",
			 ep[0].info.debug_id);
		int sfd = open(path, O_RDONLY);

		URT_CHECK(sfd >= 0);
		close(sfd);
	}

	/* Rings never become executable. */
	URT_CHECK_EQ(mprotect(ep[0].region[USNIC_REL_REGION_SQ_CMD],
			      ep[0].info.region[USNIC_REL_REGION_SQ_CMD].size,
			      PROT_READ | PROT_EXEC),
		     -1);
	URT_CHECK_EQ(errno, EACCES);

	/* REG_MR over RLIMIT_MEMLOCK. */
	URT_CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &memlock), 0);
	buf = mmap(NULL, 128 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	URT_CHECK(buf != MAP_FAILED);
	{
		struct usnic_rel_reg_mr r = {
			.size = sizeof(r),
			.addr = (uintptr_t)buf,
			.length = 128 * 1024,
			.access = USNIC_REL_ACCESS_REMOTE_READ,
			.ep_id = ep[0].info.ep_id,
		};

		URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -ENOMEM);
		r.length = 32 * 1024;
		URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), 0);
	}
	for (int i = 0; i <= CAP; i++)
		urt_ep_unmap(&ep[i]);
	close(fd);
	close(fd2);
	/* Closing gave everything back: the whole quota again. */
	fd = open("/dev/usnic_rel", O_RDWR);
	for (int i = 0; i < CAP; i++)
		URT_CHECK_EQ(create(fd, &ep[i]), 0);
	close(fd);
	return urt_done("vm_limits nobody");
}

static int denied_child(void)
{
	if (as_nobody())
		return 2;
	URT_CHECK_EQ(open("/dev/usnic_rel", O_RDWR), -1);
	URT_CHECK_EQ(errno, EACCES);
	return urt_done("vm_limits denied");
}

static void run_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		exit(fn());
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* One UDP datagram to [::1]:@port from a raw socket, checksum zero or computed. */
static void send_udp6(uint16_t port, int checksum)
{
	int s = socket(AF_INET6, SOCK_RAW, IPPROTO_UDP), off = 6;
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	uint8_t pkt[8 + 32] = { 0 };
	uint16_t v;

	URT_CHECK(s >= 0);
	v = htons(40000);
	memcpy(pkt, &v, 2);
	v = htons(port);
	memcpy(pkt + 2, &v, 2);
	v = htons(sizeof(pkt));
	memcpy(pkt + 4, &v, 2);
	memset(pkt + 8, 0xee, 32); /* not a usnic_rel header */
	if (checksum)
		URT_CHECK_EQ(setsockopt(s, IPPROTO_IPV6, IPV6_CHECKSUM, &off, sizeof(off)), 0);
	URT_CHECK_EQ(sendto(s, pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)),
		     (ssize_t)sizeof(pkt));
	close(s);
}

static void check_udp6_zero_checksum(int fd)
{
	struct urt_ep ep;
	long long bad;

	URT_CHECK_EQ(urt_ep_create(fd, AF_INET6, "::1", 0, &ep), 0);
	bad = urt_counter(ep.info.debug_id, "rx_bad_header");
	send_udp6(ep.info.addr.port, 0);
	usleep(200 * 1000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_header"), bad);
	/* The same bytes with a checksum reach the endpoint (and are refused there). */
	send_udp6(ep.info.addr.port, 1);
	for (int i = 0; i < 50 && urt_counter(ep.info.debug_id, "rx_bad_header") == bad; i++)
		usleep(20 * 1000);
	URT_CHECK_EQ(urt_counter(ep.info.debug_id, "rx_bad_header"), bad + 1);
	URT_CHECK_EQ(urt_ep_destroy(&ep), 0);
}

int main(void)
{
	struct stat st;
	int fd;

	URT_CHECK_EQ(stat("/dev/usnic_rel", &st), 0);
	URT_CHECK_EQ(st.st_mode & 07777, 0600);
	run_child(denied_child);

	fd = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd >= 0);
	check_udp6_zero_checksum(fd);
	close(fd);

	/* Access granted, as the udev rule's group would. */
	URT_CHECK_EQ(chmod("/dev/usnic_rel", 0666), 0);
	run_child(limits_child);
	URT_CHECK_EQ(chmod("/dev/usnic_rel", st.st_mode & 07777), 0);
	return urt_done("vm_limits");
}
