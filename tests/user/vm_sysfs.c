// SPDX-License-Identifier: MIT
/*
 * In-VM test: the sysfs layout under /sys/class/misc/usnic_rel. Each
 * endpoint's directory endpoints/ep<N> shows its address, creator, incarnation,
 * MTUs and number of peers, and counters that equal debugfs ep<N>/counters;
 * the device totals in counters/ are the live endpoints' sums plus what
 * destroyed endpoints counted; a directory goes away with its endpoint, and
 * a file held open across the destroy fails to read instead of crashing.
 * Expects a freshly loaded module with no other endpoint (tests/vm/with-module).
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "urt.h"
#include "urt_ep.h"

#define SYSFS "/sys/class/misc/usnic_rel"
#define MAX_COUNTERS 128

static char names[MAX_COUNTERS][64];
static int nr_names;

/* Read a whole small file into @buf; -errno on failure. */
static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	buf[n] = 0;
	close(fd);
	return 0;
}

static long long read_ll(const char *path)
{
	char buf[64], *end;
	long long v;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	v = strtoll(buf, &end, 0);
	return *end == '\n' && end[1] == 0 ? v : -2;
}

static long long ep_counter(uint32_t debug_id, const char *name)
{
	char path[192];

	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/counters/%s", debug_id, name);
	return read_ll(path);
}

static long long dev_counter(const char *name)
{
	char path[192];

	snprintf(path, sizeof(path), SYSFS "/counters/%s", name);
	return read_ll(path);
}

/* The counter names, from debugfs (ep @debug_id) in its order. */
static void load_names(uint32_t debug_id)
{
	char path[96], key[64];
	long long val;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/usnic_rel/ep%u/counters", debug_id);
	f = fopen(path, "r");
	URT_CHECK(f != NULL);
	if (!f)
		return;
	while (nr_names < MAX_COUNTERS && fscanf(f, "%63s %lld", key, &val) == 2)
		snprintf(names[nr_names++], sizeof(names[0]), "%s", key);
	fclose(f);
	URT_CHECK(nr_names > 10);
}

/* Every counter file of a directory has a debugfs name, and the other way round. */
static void check_same_names(const char *dir)
{
	struct dirent *d;
	int n = 0;
	DIR *dp = opendir(dir);

	URT_CHECK(dp != NULL);
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		int found = 0;

		if (d->d_name[0] == '.')
			continue;
		for (int i = 0; i < nr_names; i++)
			found |= !strcmp(names[i], d->d_name);
		if (!found)
			fprintf(stderr, "%s/%s: not in debugfs\n", dir, d->d_name);
		URT_CHECK(found);
		n++;
	}
	closedir(dp);
	URT_CHECK_EQ(n, nr_names);
}

/* All of an endpoint's counters; retried until two readings agree (quiet). */
static void snapshot(struct urt_ep **eps, int n, long long out[][MAX_COUNTERS], long long *dev)
{
	static long long prev[8][MAX_COUNTERS], prev_dev[MAX_COUNTERS];

	for (int tries = 0; tries < 50; tries++) {
		int same = 1;

		for (int e = 0; e < n; e++)
			for (int i = 0; i < nr_names; i++)
				out[e][i] = urt_counter(eps[e]->info.debug_id, names[i]);
		for (int i = 0; i < nr_names; i++)
			dev[i] = dev_counter(names[i]);
		for (int e = 0; e < n; e++)
			same &= !memcmp(out[e], prev[e], sizeof(prev[e]));
		same &= !memcmp(dev, prev_dev, sizeof(prev_dev));
		for (int e = 0; e < n; e++)
			memcpy(prev[e], out[e], sizeof(prev[e]));
		memcpy(prev_dev, dev, sizeof(prev_dev));
		if (same && tries)
			return;
		usleep(100000);
	}
	URT_CHECK(!"counters never settled");
}

static void check_attrs(struct urt_ep *ep, const char *address, int peers)
{
	char path[192], buf[128], want[128];
	uint32_t id = ep->info.debug_id;

	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/address", id);
	URT_CHECK_EQ(read_file(path, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s\n", address);
	if (strcmp(buf, want))
		fprintf(stderr, "ep%u address %s, expected %s", id, buf, want);
	URT_CHECK(!strcmp(buf, want));

	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/incarnation", id);
	URT_CHECK_EQ(read_file(path, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "0x%08x\n", ep->info.incarnation);
	URT_CHECK(!strcmp(buf, want));

	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/pid", id);
	URT_CHECK_EQ(read_ll(path), getpid());
	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/mtu_cmd", id);
	URT_CHECK_EQ(read_ll(path), ep->info.mtu[USNIC_REL_CHAN_CMD]);
	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/mtu_data", id);
	URT_CHECK_EQ(read_ll(path), ep->info.mtu[USNIC_REL_CHAN_DATA]);
	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/peers", id);
	URT_CHECK_EQ(read_ll(path), peers);
}

static int ep_dir_exists(uint32_t debug_id)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u", debug_id);
	return stat(path, &st) == 0;
}

/* Send @n messages from @a to @b and receive them. */
static void traffic(struct urt_ep *a, int peer_ab, struct urt_ep *b, int n)
{
	struct usnic_rel_cqe cqe;
	char msg[2000];

	memset(msg, 'm', sizeof(msg));
	for (int i = 0; i < n; i++) {
		uint32_t len = (i % 2) ? sizeof(msg) : 10;

		URT_CHECK_EQ(urt_send(a, USNIC_REL_CHAN_DATA, peer_ab, msg, len, i, 0), 0);
		URT_CHECK_EQ(urt_cq_next(b, &cqe, 5000), 0);
		URT_CHECK_EQ(cqe.len, len);
		urt_post_rx(b, cqe.buf);
		URT_CHECK_EQ(urt_cq_next(a, &cqe, 5000), 0);
		URT_CHECK_EQ(cqe.status, 0);
	}
}

int main(void)
{
	static long long c[3][MAX_COUNTERS], dev[MAX_COUNTERS], c2[3][MAX_COUNTERS],
		dev2[MAX_COUNTERS], retired[MAX_COUNTERS];
	struct urt_ep a, b, v6;
	struct urt_ep *eps[3] = { &a, &b, &v6 };
	char addr[96], path[192], buf[64];
	int fd, held, pab;

	fd = open("/dev/usnic_rel", O_RDWR);
	URT_CHECK(fd >= 0);
	if (fd < 0)
		return urt_done("vm_sysfs");
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &a), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET, "127.0.0.1", 0, &b), 0);
	URT_CHECK_EQ(urt_ep_create(fd, AF_INET6, "::1", 0, &v6), 0);
	if (urt_failures)
		return urt_done("vm_sysfs");
	load_names(a.info.debug_id);
	check_same_names(SYSFS "/counters");
	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/counters", a.info.debug_id);
	check_same_names(path);

	pab = urt_av_insert(&a, AF_INET, "127.0.0.1", b.info.addr.port);
	URT_CHECK(pab > 0);
	URT_CHECK(urt_av_insert(&b, AF_INET, "127.0.0.1", a.info.addr.port) > 0);
	URT_CHECK(urt_av_insert(&b, AF_INET, "127.0.0.2", 9) > 0);
	urt_post_all_rx(&b);
	traffic(&a, pab, &b, 20);

	snprintf(addr, sizeof(addr), "127.0.0.1:%u", a.info.addr.port);
	check_attrs(&a, addr, 1);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", b.info.addr.port);
	check_attrs(&b, addr, 2);
	snprintf(addr, sizeof(addr), "[::1]:%u", v6.info.addr.port);
	check_attrs(&v6, addr, 0);

	/* Per endpoint, sysfs equals debugfs; the totals add up. */
	snapshot(eps, 3, c, dev);
	for (int e = 0; e < 3; e++)
		for (int i = 0; i < nr_names; i++)
			URT_CHECK_EQ(ep_counter(eps[e]->info.debug_id, names[i]), c[e][i]);
	for (int i = 0; i < nr_names; i++) {
		retired[i] = dev[i] - c[0][i] - c[1][i] - c[2][i];
		/* A fresh module: nothing destroyed yet. */
		URT_CHECK_EQ(retired[i], 0);
	}
	URT_CHECK(c[0][0] > 0); /* tx_packets moved */

	/* Destroy a: its directory goes, its counters stay in the totals. */
	snprintf(path, sizeof(path), SYSFS "/endpoints/ep%u/counters/tx_packets", a.info.debug_id);
	held = open(path, O_RDONLY);
	URT_CHECK(held >= 0);
	URT_CHECK(pread(held, buf, sizeof(buf), 0) > 0);
	uint32_t a_id = a.info.debug_id;

	URT_CHECK_EQ(urt_ep_destroy(&a), 0);
	URT_CHECK(!ep_dir_exists(a_id));
	URT_CHECK(pread(held, buf, sizeof(buf), 0) < 0);
	close(held);
	eps[0] = &b;
	eps[1] = &v6;
	snapshot(eps, 2, c2, dev2);
	for (int i = 0; i < nr_names; i++) {
		URT_CHECK_EQ(dev2[i], c2[0][i] + c2[1][i] + c[0][i]);
		URT_CHECK_EQ(dev2[i], dev[i]);
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", b.info.addr.port);
	check_attrs(&b, addr, 2);
	/* Closing the file (and its mappings) destroys the rest. */
	urt_ep_unmap(&b);
	urt_ep_unmap(&v6);
	close(fd);
	URT_CHECK(!ep_dir_exists(b.info.debug_id));
	URT_CHECK(!ep_dir_exists(v6.info.debug_id));
	for (int i = 0; i < nr_names; i++)
		URT_CHECK_EQ(dev_counter(names[i]), dev[i]);
	return urt_done("vm_sysfs");
}
