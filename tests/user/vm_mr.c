// SPDX-License-Identifier: MIT
/*
 * In-VM test: memory registration pins pages, charges them to the process
 * (VmPin, RLIMIT_MEMLOCK) and gives them back on deregistration and close;
 * an unprivileged user may register and deregister in a loop.
 */
#include <stddef.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "urt.h"
#include "urt_ep.h"

/* The endpoint registrations of the open file serve (one per file here). */
static uint32_t mr_ep_id;

static uint32_t open_ep(int fd)
{
	struct urt_ep ep;

	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &ep), 0);
	urt_ep_unmap(&ep);
	return ep.info.ep_id;
}

static int reg(int fd, void *addr, uint64_t len, uint32_t access, uint64_t *rkey)
{
	struct usnic_rel_reg_mr r = {
		.size = sizeof(r),
		.addr = (uintptr_t)addr,
		.length = len,
		.access = access,
		.ep_id = mr_ep_id,
	};
	int ret = urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r);

	if (!ret && rkey)
		*rkey = r.rkey;
	return ret;
}

static int dereg(int fd, uint64_t rkey)
{
	struct usnic_rel_dereg_mr d = { .size = sizeof(d), .rkey = rkey };

	return urt_ioctl(fd, USNIC_REL_IOC_DEREG_MR, &d);
}

/* Pinned memory of this process in kB, from /proc/self/status. */
static long vm_pin_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void check_basic(int fd)
{
	size_t len = 16 * 4096;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t k1 = 0, k2 = 0, k3 = 0;
	long pin0 = vm_pin_kb();

	URT_CHECK(buf != MAP_FAILED && ro != MAP_FAILED);
	URT_CHECK_EQ(reg(fd, buf, len, USNIC_REL_ACCESS_ALL, &k1), 0);
	URT_CHECK_EQ(vm_pin_kb(), pin0 + 64);
	/* Unaligned start and end: pages 0..2 of the range. */
	URT_CHECK_EQ(reg(fd, buf + 100, 2 * 4096, USNIC_REL_ACCESS_REMOTE_READ, &k2), 0);
	URT_CHECK_EQ(vm_pin_kb(), pin0 + 64 + 12);
	URT_CHECK(k1 != k2);
	/* Read-only memory: remote read yes, anything that writes no. */
	URT_CHECK_EQ(reg(fd, ro, 4096, USNIC_REL_ACCESS_REMOTE_READ, &k3), 0);
	URT_CHECK_EQ(reg(fd, ro, 4096, USNIC_REL_ACCESS_LOCAL_WRITE, NULL), -EFAULT);

	/* 64-bit keys: the whole key names it, not its low half. */
	URT_CHECK((k1 >> 32) != 0 || (k2 >> 32) != 0);
	URT_CHECK_EQ(dereg(fd, k2 ^ (1ULL << 63)), -EINVAL);
	URT_CHECK_EQ(dereg(fd, k2), 0);
	URT_CHECK_EQ(dereg(fd, k2), -EINVAL);
	URT_CHECK_EQ(dereg(fd, k1), 0);
	URT_CHECK_EQ(dereg(fd, k3), 0);
	URT_CHECK_EQ(vm_pin_kb(), pin0);

	/* Bad arguments. */
	URT_CHECK_EQ(reg(fd, buf, 0, USNIC_REL_ACCESS_ALL, NULL), -EINVAL);
	URT_CHECK_EQ(reg(fd, buf, 4096, 0x10, NULL), -EINVAL);
	URT_CHECK_EQ(reg(fd, (void *)-4096L, 8192, USNIC_REL_ACCESS_ALL, NULL), -EINVAL);
	URT_CHECK_EQ(reg(fd, (void *)(1UL << 60), 4096, USNIC_REL_ACCESS_ALL, NULL), -EINVAL);
	URT_CHECK_EQ(reg(fd, (void *)4096, 4096, USNIC_REL_ACCESS_ALL, NULL), -EFAULT);
	struct usnic_rel_reg_mr r = {
		.size = sizeof(r),
		.addr = (uintptr_t)buf,
		.length = 4096,
		.access = USNIC_REL_ACCESS_ALL,
		.ep_id = mr_ep_id,
		.flags = 1,
	};

	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -EINVAL);
	/* A registration serves an endpoint of this file: none, or a wrong id. */
	r.flags = 0;
	r.ep_id = 0;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -EINVAL);
	r.ep_id = mr_ep_id + 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -EINVAL);
	r.ep_id = mr_ep_id;
	/* An older, shorter structure without the reserved tail is accepted... */
	r.size = offsetof(struct usnic_rel_reg_mr, reserved);
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), 0);
	URT_CHECK(r.rkey != 0);
	URT_CHECK_EQ(dereg(fd, r.rkey), 0);
	r.rkey = 0;
	/* ...one that stops before the rkey it must return is not. */
	r.size = offsetof(struct usnic_rel_reg_mr, rkey);
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -EINVAL);
	r.size = sizeof(r);
	r.flags = 0;
	r.reserved[0] = 1;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -EINVAL);
	r.reserved[0] = 0;
	r.rkey = 5;
	URT_CHECK_EQ(urt_ioctl(fd, USNIC_REL_IOC_REG_MR, &r), -EINVAL);
	URT_CHECK_EQ(vm_pin_kb(), pin0);

	/* Registrations left at close are released with the file. */
	URT_CHECK_EQ(reg(fd, buf, len, USNIC_REL_ACCESS_ALL, &k1), 0);
	munmap(ro, 4096);
	munmap(buf, len);
}

/* REG_MR/DEREG_MR pairs as nobody: argv[1], 10000 in the stock-only run. */
static int reg_loops = 300;

/*
 * As an unprivileged user, RLIMIT_MEMLOCK bounds what can be pinned, and
 * REG_MR/DEREG_MR in a loop work (no machine-wide grace period each).
 */
static int check_rlimit_child(void)
{
	struct rlimit rl = { .rlim_cur = 64 * 1024, .rlim_max = 64 * 1024 };
	size_t len = 128 * 1024;
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t k1, k2;
	int fd;

	URT_CHECK(buf != MAP_FAILED);
	URT_CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	/* Opened while root (the node is root's); the pins are charged as nobody. */
	fd = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd >= 0);
	URT_CHECK_EQ(setgid(65534), 0);
	URT_CHECK_EQ(setuid(65534), 0);
	mr_ep_id = open_ep(fd);
	URT_CHECK_EQ(reg(fd, buf, 32 * 1024, USNIC_REL_ACCESS_ALL, &k1), 0);
	URT_CHECK_EQ(reg(fd, buf, 64 * 1024, USNIC_REL_ACCESS_ALL, NULL), -ENOMEM);
	URT_CHECK_EQ(reg(fd, buf, len, USNIC_REL_ACCESS_ALL, NULL), -ENOMEM);
	URT_CHECK_EQ(reg(fd, buf, 32 * 1024, USNIC_REL_ACCESS_ALL, &k2), 0);
	URT_CHECK_EQ(reg(fd, buf, 4096, USNIC_REL_ACCESS_ALL, NULL), -ENOMEM);
	URT_CHECK_EQ(vm_pin_kb(), 64);
	URT_CHECK_EQ(dereg(fd, k1), 0);
	URT_CHECK_EQ(reg(fd, buf, 4096, USNIC_REL_ACCESS_ALL, NULL), 0);
	/*
	 * Registering and deregistering in a loop is an unprivileged user's
	 * right: each must complete, and nothing may stay pinned.
	 */
	for (int i = 0; i < reg_loops && !urt_failures; i++) {
		URT_CHECK_EQ(reg(fd, buf + (i % 16) * 4096, 4096, USNIC_REL_ACCESS_ALL, &k1), 0);
		URT_CHECK_EQ(dereg(fd, k1), 0);
	}
	URT_CHECK_EQ(vm_pin_kb(), 32 + 4);
	printf("vm_mr: %d REG_MR/DEREG_MR pairs as nobody\n", reg_loops);
	close(fd);
	URT_CHECK_EQ(vm_pin_kb(), 0);
	return urt_done("vm_mr rlimit");
}

int main(int argc, char **argv)
{
	int fd = open("/dev/usnic_rel", O_RDWR);
	int status;
	pid_t pid;

	if (argc > 1)
		reg_loops = atoi(argv[1]);
	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_mr");
	mr_ep_id = open_ep(fd);
	check_basic(fd);
	close(fd);
	URT_CHECK_EQ(vm_pin_kb(), 0);

	pid = fork();
	if (pid == 0)
		exit(check_rlimit_child());
	URT_CHECK_EQ(waitpid(pid, &status, 0), pid);
	URT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return urt_done("vm_mr");
}
