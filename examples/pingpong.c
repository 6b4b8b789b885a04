// SPDX-License-Identifier: MIT
/*
 * Ping-pong over libusnicrel: the client sends a message, the server sends it
 * back, ITERATIONS times; the client checks every echo and prints the latency.
 *
 *   pingpong server MY_IP MY_PORT PEER_IP PEER_PORT [ITERATIONS [SIZE]]
 *   pingpong client MY_IP MY_PORT PEER_IP PEER_PORT [ITERATIONS [SIZE]]
 *
 * Both sides name each other: a peer must be in the address vector before
 * its messages are accepted. Start the server first.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <usnicrel.h>

static int check(const char *what, int ret)
{
	if (ret < 0) {
		fprintf(stderr, "pingpong: %s: %s\n", what, urel_strerror(ret));
		exit(1);
	}
	return ret;
}

/* A numeric IPv4 or IPv6 address and a port. */
static socklen_t resolve(const char *ip, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_DGRAM };
	struct addrinfo *ai;
	socklen_t len;

	if (getaddrinfo(ip, port, &hints, &ai)) {
		fprintf(stderr, "pingpong: bad address %s port %s\n", ip, port);
		exit(2);
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return len;
}

/* Waits for the next message; completions of our own sends are taken on the way. */
static void wait_recv(struct urel_device *dev, struct urel_ep *ep, struct urel_completion *c,
		      int *sends_in_flight)
{
	for (;;) {
		if (!check("poll", urel_ep_poll_cq(ep, c, 1))) {
			check("wait", urel_device_wait(dev, -1));
			continue;
		}
		check(c->opcode == UREL_OP_RECV ? "receive" : "send", c->status);
		if (c->opcode == UREL_OP_RECV)
			return;
		(*sends_in_flight)--;
	}
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage me, them;
	struct urel_completion c;
	struct urel_device *dev;
	struct urel_ep *ep;
	urel_peer_t peer;
	int client, iters, in_flight = 0;
	size_t size;
	char *msg;
	double t0;

	if (argc < 6 || argc > 8 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: pingpong server|client MY_IP MY_PORT PEER_IP PEER_PORT "
				"[ITERATIONS [SIZE]]\n");
		return 2;
	}
	client = !strcmp(argv[1], "client");
	iters = argc > 6 ? atoi(argv[6]) : 1000;
	size = argc > 7 ? strtoul(argv[7], NULL, 0) : 8;
	msg = calloc(1, size + 1);
	if (iters < 1 || !msg)
		return 2;

	check("open /dev/usnic_rel", urel_device_open(NULL, &dev));
	socklen_t len = resolve(argv[2], argv[3], &me);
	check("create endpoint", urel_ep_create(dev, (struct sockaddr *)&me, len, NULL, &ep));
	len = resolve(argv[4], argv[5], &them);
	check("insert peer", urel_av_insert(ep, (struct sockaddr *)&them, len, &peer));

	t0 = now_us();
	for (int i = 0; i < iters; i++) {
		if (client) {
			memset(msg, 'a' + i % 26, size);
			check("send",
			      urel_ep_send(ep, peer, UREL_CHAN_DATA, msg, size, i, NULL, 0));
			in_flight++;
			wait_recv(dev, ep, &c, &in_flight);
			if (c.imm != (uint64_t)i || c.len != size || memcmp(c.data, msg, size)) {
				fprintf(stderr, "pingpong: echo %d is wrong\n", i);
				return 1;
			}
		} else {
			/* Echo: same bytes, same immediate data, from the receive buffer. */
			wait_recv(dev, ep, &c, &in_flight);
			check("send", urel_ep_send(ep, peer, UREL_CHAN_DATA, c.data, c.len, c.imm,
						   NULL, 0));
			in_flight++;
		}
		/* The bytes of c.data are ours until the buffer goes back. */
		check("release", urel_ep_release_recv(ep, c.buf));
	}
	double us = (now_us() - t0) / iters;

	/* A send completes once the peer has it: wait for ours before leaving. */
	while (in_flight > 0) {
		if (!check("poll", urel_ep_poll_cq(ep, &c, 1))) {
			check("wait", urel_device_wait(dev, -1));
			continue;
		}
		check("send", c.status);
		in_flight--;
	}
	if (client) {
		/* The last message was ours to receive: let our delayed ACK leave first. */
		usleep(100 * 1000);
		printf("pingpong: %d round trips of %zu bytes: %.1f us per round trip, "
		       "%.1f us one way\n",
		       iters, size, us, us / 2);
	} else {
		printf("pingpong: echoed %d messages of %zu bytes\n", iters, size);
	}
	urel_ep_destroy(ep);
	urel_device_close(dev);
	free(msg);
	return 0;
}
