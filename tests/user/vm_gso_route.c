// SPDX-License-Identifier: MIT
/*
 * In-VM test: a peer whose route stops taking UDP GSO, then takes it
 * again. A target endpoint answers RDMA gets of 256 KiB in runs of
 * full-size packets, each run one GSO skb. When lo's MTU drops below the
 * packet size, the run is refused (a segment would need fragmenting): the
 * kernel must fall back to packet by packet once and remember that the
 * route refuses, not try and fail on every run. When the MTU comes back,
 * the route changes and GSO must be tried again. Every get is checked
 * byte for byte. IPv4 and IPv6, in a network namespace of its own, so the
 * MTU changes stay here whatever happens.
 * (The region is registered before it is first written: vm_mr_cow has
 * the cases of that.)
 *
 * Usage: vm_gso_route (as root)
 */
#include <arpa/inet.h>
#include <sched.h>
#include <stdlib.h>

#include "urt.h"
#include "urt_ep.h"
#include "urt_lib.h"

#define REGION (256 * 1024)
/* Below the data channel's packets on lo (up to 9000 B), above IPv6's 1280. */
#define LOW_MTU "2000"
#define GETS_PER_PHASE 2

static struct urel_device *dev;
static struct urel_ep *origin, *target;
static urel_peer_t to_target;
static uint32_t target_id;
static uint64_t rkey;
static uint8_t region[REGION] __attribute__((aligned(4096)));
static uint8_t back[REGION];

static int lo_mtu(const char *mtu)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "ip link set lo mtu %s", mtu);
	return system(cmd);
}

static long long counter(const char *name)
{
	return urt_sysfs_counter(target_id, name);
}

/* GETS_PER_PHASE gets of the whole region, each checked. */
static void gets(const char *phase)
{
	for (int i = 0; i < GETS_PER_PHASE; i++) {
		struct urel_completion c;

		memset(back, 0, sizeof(back));
		URT_CHECK_EQ(urel_ep_get(origin, to_target, back, REGION, rkey, 0, NULL, 0), 0);
		if (urt_poll_n(dev, origin, &c, 1, 30000) != 1) {
			fprintf(stderr, "vm_gso_route: %s: get %d never completed\n", phase, i);
			urt_dump_debugfs("peers");
			exit(1);
		}
		URT_CHECK_EQ(c.status, 0);
		URT_CHECK_EQ(c.opcode, UREL_OP_GET);
		if (memcmp(back, region, REGION)) {
			size_t first = 0, n = 0;

			for (size_t b = REGION; b-- > 0;) {
				if (back[b] != region[b]) {
					first = b;
					n++;
				}
			}
			fprintf(stderr, "vm_gso_route: %s: get %d: %zu bytes differ from %zu\n",
				phase, i, n, first);
			urt_failures++;
		}
	}
}

static int endpoint(int family, const char *ip, struct urel_ep **ep)
{
	struct sockaddr_storage ss = { .ss_family = family };
	void *addr = family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
				       : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
	socklen_t len =
		family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);

	inet_pton(family, ip, addr);
	return urel_ep_create(dev, (struct sockaddr *)&ss, len, NULL, ep);
}

/* Insert @peer's own address into @ep's address vector. */
static int insert(struct urel_ep *ep, struct urel_ep *peer, urel_peer_t *handle)
{
	struct urel_ep_info info;
	int ret = urel_ep_query(peer, &info);

	if (ret)
		return ret;
	return urel_av_insert(ep, (struct sockaddr *)&info.addr,
			      info.addr.ss_family == AF_INET ? sizeof(struct sockaddr_in)
							     : sizeof(struct sockaddr_in6),
			      handle);
}

static void run(int family, const char *ip)
{
	long long runs, fallbacks;
	struct urel_ep_info info;
	struct urel_mr *mr;
	urel_peer_t to_origin;

	printf("vm_gso_route: %s\n", ip);
	if (endpoint(family, ip, &target) || endpoint(family, ip, &origin)) {
		fprintf(stderr, "vm_gso_route: no endpoints on %s\n", ip);
		exit(1);
	}
	URT_CHECK_EQ(urel_ep_query(target, &info), 0);
	target_id = info.debug_id;
	URT_CHECK_EQ(urel_mr_reg(target, region, REGION, UREL_ACCESS_REMOTE_READ, &mr), 0);
	rkey = urel_mr_rkey(mr);
	URT_CHECK_EQ(insert(target, origin, &to_origin), 0);
	URT_CHECK_EQ(insert(origin, target, &to_target), 0);
	urt_fill(region, (uint64_t)family, REGION);

	/* The route takes GSO: runs, no fallback. */
	gets("GSO route");
	runs = counter("tx_gso_runs");
	fallbacks = counter("tx_gso_fallbacks");
	URT_CHECK(runs > 0);
	URT_CHECK_EQ(fallbacks, 0);

	/* A segment no longer fits: one refused run, then packet by packet. */
	URT_CHECK_EQ(lo_mtu(LOW_MTU), 0);
	gets("low MTU");
	URT_CHECK_EQ(counter("tx_gso_runs"), runs);
	fallbacks = counter("tx_gso_fallbacks");
	printf("vm_gso_route: %s low MTU: %lld fallback(s)\n", ip, fallbacks);
	/* The MTU change may replace the route once more while the first run goes. */
	URT_CHECK(fallbacks >= 1 && fallbacks <= 2);

	/* The MTU is back: a new route, tried with GSO again. */
	URT_CHECK_EQ(lo_mtu("65536"), 0);
	gets("MTU restored");
	printf("vm_gso_route: %s MTU restored: %lld more GSO run(s)\n", ip,
	       counter("tx_gso_runs") - runs);
	URT_CHECK(counter("tx_gso_runs") > runs);
	URT_CHECK_EQ(counter("tx_gso_fallbacks"), fallbacks);

	URT_CHECK_EQ(urel_mr_dereg(mr), 0);
	URT_CHECK_EQ(urel_ep_destroy(origin), 0);
	URT_CHECK_EQ(urel_ep_destroy(target), 0);
}

int main(void)
{
	if (unshare(CLONE_NEWNET) || system("ip link set lo up")) {
		perror("vm_gso_route: a network namespace of its own");
		return 1;
	}
	if (urel_device_open(NULL, &dev)) {
		fprintf(stderr, "vm_gso_route: no device\n");
		return 1;
	}
	run(AF_INET, "127.0.0.1");
	run(AF_INET6, "::1");
	urel_device_close(dev);
	return urt_done("vm_gso_route");
}
