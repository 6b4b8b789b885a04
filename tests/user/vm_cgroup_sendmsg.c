// SPDX-License-Identifier: MIT
/*
 * In-VM test: a cgroup BPF sendmsg program (BPF_CGROUP_UDP4_SENDMSG) that
 * denies one destination port applies to the module's transmissions as to
 * sendto(2), although they leave through the UDP tunnel helpers and never
 * call sendmsg. The program is hand-assembled and loaded with bpf(2) (no
 * libbpf), attached to a fresh child cgroup this process moves into before
 * creating its endpoints: their sockets belong to that cgroup.
 *
 * Endpoint A (port 7301) sends to B (7302, denied) and to C (7303,
 * allowed). C must receive its message; B must receive nothing at all (not
 * even a HELLO), and A counts its refused packets in tx_errors. A plain UDP
 * socket's sendto to B's port gets EPERM: the program works.
 *
 * Usage: vm_cgroup_sendmsg (uses /sys/fs/cgroup if it is cgroup2, else
 * mounts one on /run/urel-cgroup2). Needs CONFIG_CGROUP_BPF: stock only.
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "urt.h"
#include "urt_ep.h"

#define PORT_A 7301
#define PORT_B 7302
#define PORT_C 7303

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* return user_port == htons(PORT_B) ? 0 (deny) : 1 (allow) */
static int load_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W,
		  .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_1,
		  .off = offsetof(struct bpf_sock_addr, user_port) },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K,
		  .dst_reg = BPF_REG_2,
		  .off = 1,
		  .imm = htons(PORT_B) },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
	attr.expected_attach_type = BPF_CGROUP_UDP4_SENDMSG;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t) "GPL";
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0)
		fprintf(stderr, "BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
	return fd;
}

static int write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(s, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static int udp_sendto(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ret = sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static void run(int fd)
{
	struct urt_ep a, b, c;
	struct usnic_rel_cqe cqe;
	int pb, pc, ret, got = 0;

	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_A, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_B, &b), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", PORT_C, &c), 0);
	if (urt_failures)
		return;
	urt_post_all_rx(&b);
	urt_post_all_rx(&c);
	pb = urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_B);
	pc = urt_av_insert(&a, AF_INET, "127.0.0.1", PORT_C);
	URT_CHECK(urt_av_insert(&b, AF_INET, "127.0.0.1", PORT_A) > 0);
	URT_CHECK(urt_av_insert(&c, AF_INET, "127.0.0.1", PORT_A) > 0);
	URT_CHECK(pb > 0 && pc > 0);
	if (urt_failures)
		return;
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, pb, "denied", 6, 1, 1), 0);
	URT_CHECK_EQ(urt_send(&a, USNIC_REL_CHAN_CMD, pc, "allowed", 7, 2, 2), 0);
	/* C gets its message: the program allows all but one port. */
	ret = urt_cq_next(&c, &cqe, 10000);
	URT_CHECK_EQ(ret, 0);
	if (!ret) {
		URT_CHECK_EQ(cqe.status, 0);
		URT_CHECK_EQ(cqe.imm, 2);
		got = 1;
	}
	/* The sender's completion for C; B's send stays pending. */
	URT_CHECK_EQ(urt_cq_next(&a, &cqe, 10000), 0);
	URT_CHECK_EQ(cqe.user_ctx, 2);
	/* Several retransmission timeouts: B must still have seen nothing. */
	URT_CHECK_EQ(urt_cq_next(&b, &cqe, 2000), -ETIMEDOUT);
	printf("C received %d; B rx_packets %lld; A tx_errors %lld\n", got,
	       urt_counter(b.info.debug_id, "rx_packets"),
	       urt_counter(a.info.debug_id, "tx_errors"));
	URT_CHECK_EQ(urt_counter(b.info.debug_id, "rx_packets"), 0);
	URT_CHECK(urt_counter(a.info.debug_id, "tx_errors") > 0);
	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	URT_CHECK_EQ(urt_ep_destroy(&b), 0);
	URT_CHECK_EQ(urt_ep_destroy(&c), 0);
}

/* A cgroup2 hierarchy: the system's, or one mounted for the test. */
static const char *cgroup2_root(void)
{
	static const char *const mine = "/run/urel-cgroup2";

	if (!access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		return "/sys/fs/cgroup";
	if (!access("/run/urel-cgroup2/cgroup.controllers", F_OK))
		return mine;
	mkdir(mine, 0755);
	if (mount("cgroup2", mine, "cgroup2", 0, NULL)) {
		fprintf(stderr, "mount cgroup2: %s\n", strerror(errno));
		return NULL;
	}
	return mine;
}

int main(void)
{
	char cg[256], path[300], pid[32];
	const char *root = cgroup2_root();
	union bpf_attr attr;
	int prog, cgfd, fd;

	URT_CHECK(root != NULL);
	if (!root)
		return urt_done("vm_cgroup_sendmsg");
	snprintf(cg, sizeof(cg), "%s/urel_sendmsg", root);
	rmdir(cg);
	URT_CHECK_EQ(mkdir(cg, 0755), 0);
	cgfd = open(cg, O_RDONLY | O_DIRECTORY);
	prog = load_prog();
	URT_CHECK(cgfd >= 0 && prog >= 0);
	if (urt_failures)
		return urt_done("vm_cgroup_sendmsg");
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = cgfd;
	attr.attach_bpf_fd = prog;
	attr.attach_type = BPF_CGROUP_UDP4_SENDMSG;
	URT_CHECK_EQ(sys_bpf(BPF_PROG_ATTACH, &attr), 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	URT_CHECK_EQ(write_str(path, pid), 0);
	URT_CHECK_EQ(udp_sendto(PORT_B), -EPERM);
	URT_CHECK_EQ(udp_sendto(PORT_C), 0);
	fd = open("/dev/usnic_rel", O_RDWR | O_CLOEXEC);
	URT_CHECK(fd >= 0);
	if (!urt_failures)
		run(fd);
	if (fd >= 0)
		close(fd);
	/* Out of the cgroup, then remove it: its program goes with it. */
	snprintf(path, sizeof(path), "%s/cgroup.procs", root);
	URT_CHECK_EQ(write_str(path, pid), 0);
	URT_CHECK_EQ(sys_bpf(BPF_PROG_DETACH, &attr), 0);
	close(prog);
	close(cgfd);
	URT_CHECK_EQ(rmdir(cg), 0);
	return urt_done("vm_cgroup_sendmsg");
}
