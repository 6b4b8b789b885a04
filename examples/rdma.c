// SPDX-License-Identifier: MIT
/*
 * Emulated RDMA: the target registers memory and sends its key to the origin, which puts
 * bytes there, gets them back, and runs fetch-add, compare-and-swap and swap on a counter
 * there, all served by the target's kernel while the target process waits for "done".
 *   rdma target|origin MY_IP MY_PORT PEER_IP PEER_PORT      (start the target first)
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <usnicrel.h>

#define COUNTER_OFF 64 /* a 64-bit counter for the atomics; the text goes at 0 */

static struct urel_device *dev;
static struct urel_ep *ep;

static void check(const char *what, int ret)
{
	if (ret < 0) {
		fprintf(stderr, "rdma: %s: %s\n", what, urel_strerror(ret));
		exit(1);
	}
}

/* A numeric IPv4 or IPv6 address and a port. */
static socklen_t resolve(const char *ip, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai;
	socklen_t len;

	check(ip, getaddrinfo(ip, port, &hints, &ai) ? -EINVAL : 0);
	len = ai->ai_addrlen;
	memcpy(ss, ai->ai_addr, len);
	freeaddrinfo(ai);
	return len;
}

/* The next completion: the outcome of the one operation we have in flight, or a message. */
static struct urel_completion next(const char *what)
{
	struct urel_completion c;
	int n;

	while (!(n = urel_ep_poll_cq(ep, &c, 1)))
		urel_device_wait(dev, -1);
	check(what, n);
	check(what, c.status);
	return c;
}

static int target(urel_peer_t origin)
{
	static _Alignas(64) char mem[4096]; /* atomics need aligned operands */
	unsigned int access =
		UREL_ACCESS_REMOTE_READ | UREL_ACCESS_REMOTE_WRITE | UREL_ACCESS_REMOTE_ATOMIC;
	struct urel_mr *mr;
	uint64_t counter;

	check("register", urel_mr_reg(ep, mem, sizeof(mem), access, &mr));
	/* Publish the key: here as the immediate data of an empty message. */
	check("send key",
	      urel_ep_send(ep, origin, UREL_CHAN_CMD, NULL, 0, urel_mr_rkey(mr), NULL, 0));
	next("send key");
	printf("target: registered %zu bytes, rkey %016" PRIx64 " sent\n", sizeof(mem),
	       urel_mr_rkey(mr));

	/* Meanwhile the origin works on mem without us; we wait for its "done". */
	check("release", urel_ep_release_recv(ep, next("wait for done").buf));
	memcpy(&counter, mem + COUNTER_OFF, sizeof(counter));
	printf("target: memory holds \"%s\", counter %" PRIu64 "\n", mem, counter);
	check("deregister", urel_mr_dereg(mr));
	usleep(100 * 1000); /* let the delayed ACK of "done" leave before the endpoint goes */
	return 0;
}

/* Runs one atomic on the counter and returns the value it held before. */
static uint64_t atomic(urel_peer_t peer, uint64_t rkey, enum urel_atomic_op op, uint64_t operand,
		       uint64_t compare)
{
	static const char *const name[] = { [UREL_ATOMIC_FETCH_ADD] = "fetch-add",
					    [UREL_ATOMIC_CAS] = "compare-and-swap",
					    [UREL_ATOMIC_SWAP] = "swap" };
	uint64_t old = 0;
	struct urel_atomic a = {
		.op = op, .size = 8, .operand = operand, .compare = compare, .result = &old
	};

	check(name[op], urel_ep_atomic(ep, peer, &a, rkey, COUNTER_OFF, NULL, 0));
	next(name[op]);
	printf("origin: %s %" PRIu64 ": old value %" PRIu64 "\n", name[op], operand, old);
	return old;
}

static int origin(urel_peer_t target)
{
	static const char text[] = "written by the origin, read back by the origin";
	char back[sizeof(text)] = "";
	struct urel_completion c = next("wait for the key");
	uint64_t rkey = c.imm;
	int ok;

	check("release", urel_ep_release_recv(ep, c.buf));
	printf("origin: got rkey %016" PRIx64 "\n", rkey);

	/* One operation at a time: puts and gets travel on different channels. */
	check("put", urel_ep_put(ep, target, text, sizeof(text), rkey, 0, NULL, 0));
	next("put");
	check("get", urel_ep_get(ep, target, back, sizeof(back), rkey, 0, NULL, 0));
	next("get");
	ok = !memcmp(back, text, sizeof(text));
	printf("origin: put %zu bytes, got them back: %s\n", sizeof(text),
	       ok ? "same" : "DIFFERENT");

	ok &= atomic(target, rkey, UREL_ATOMIC_FETCH_ADD, 5, 0) == 0; /* 0 -> 5 */
	ok &= atomic(target, rkey, UREL_ATOMIC_CAS, 42, 5) == 5; /* 5 -> 42 */
	ok &= atomic(target, rkey, UREL_ATOMIC_CAS, 99, 5) == 42; /* 42 stays */
	ok &= atomic(target, rkey, UREL_ATOMIC_SWAP, 7, 0) == 42; /* 42 -> 7 */

	check("send done", urel_ep_send(ep, target, UREL_CHAN_CMD, "done", 4, 0, NULL, 0));
	next("send done");
	printf("origin: %s\n", ok ? "all results as expected" : "UNEXPECTED RESULTS");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage me, them;
	urel_peer_t peer;

	if (argc != 6 || (strcmp(argv[1], "target") && strcmp(argv[1], "origin"))) {
		fprintf(stderr, "usage: rdma target|origin MY_IP MY_PORT PEER_IP PEER_PORT\n");
		return 2;
	}
	check("open /dev/usnic_rel", urel_device_open(NULL, &dev));
	socklen_t len = resolve(argv[2], argv[3], &me);
	check("create endpoint", urel_ep_create(dev, (struct sockaddr *)&me, len, NULL, &ep));
	len = resolve(argv[4], argv[5], &them);
	check("insert peer", urel_av_insert(ep, (struct sockaddr *)&them, len, &peer));
	int ret = strcmp(argv[1], "target") ? origin(peer) : target(peer);

	urel_ep_destroy(ep);
	urel_device_close(dev);
	return ret;
}
