// SPDX-License-Identifier: MIT
/*
 * A tagged ring over N ranks, launched by any PMIx launcher:
 *
 *   mpirun -np 4 build/examples/ring [ROUNDS [SIZE]]
 *   srun --mpi=pmix -n 4 build/examples/ring [ROUNDS [SIZE]]
 *
 * Each rank binds an endpoint to $UREL_ADDR (default 127.0.0.1), learns its
 * rank, the job size and every peer's address through PMIx, and joins the
 * world group. Rank 0 starts a SIZE-byte token (default 100000: above the
 * eager limit, so it moves by RDMA get) around the ring ROUNDS times
 * (default 10); every rank checks each byte and adds its rank to a counter
 * in the token. Then an allgather of the ranks' process ids and a barrier.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <usnicrel_msg.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "ring: %s: %s\n", what, urel_strerror(err));
	return 1;
}

static uint8_t pattern(int round, size_t i)
{
	return (uint8_t)(round * 13 + i * 7);
}

/* Bytes after the 8-byte counter follow the round's pattern. */
static int token_ok(const uint8_t *tok, size_t size, int round)
{
	for (size_t i = 8; i < size; i++) {
		if (tok[i] != pattern(round, i))
			return 0;
	}
	return 1;
}

static int ring(struct urel_group *g, int rounds, size_t size)
{
	int rank = urel_group_rank(g), n = urel_group_size(g), ret;
	int left = (rank + n - 1) % n, right = (rank + 1) % n;
	uint8_t *tok = calloc(1, size);
	struct urel_msg_status st;
	struct urel_msg_req *req;
	uint64_t sum, want = 0;

	if (!tok)
		return -1;
	for (int r = 0; r < n; r++)
		want += (uint64_t)r;
	for (int round = 0; round < rounds; round++) {
		if (rank == 0) {
			sum = 0;
			memcpy(tok, &sum, sizeof(sum));
			for (size_t i = 8; i < size; i++)
				tok[i] = pattern(round, i);
			ret = urel_group_isend(g, right, tok, size, round, 0, &req);
			if (!ret)
				ret = urel_msg_wait(req, NULL);
			if (ret)
				return fail("send", ret);
		}
		ret = urel_group_irecv(g, left, tok, size, round, &req);
		if (!ret)
			ret = urel_msg_wait(req, &st);
		if (ret)
			return fail("receive", ret);
		if (st.len != size || !token_ok(tok, size, round)) {
			fprintf(stderr, "ring: rank %d: round %d: token damaged\n", rank, round);
			return 1;
		}
		memcpy(&sum, tok, sizeof(sum));
		if (rank == 0) {
			if (sum != want) {
				fprintf(stderr, "ring: round %d: counter %llu, want %llu\n", round,
					(unsigned long long)sum, (unsigned long long)want);
				return 1;
			}
			continue;
		}
		sum += (uint64_t)rank;
		memcpy(tok, &sum, sizeof(sum));
		ret = urel_group_isend(g, right, tok, size, round, 0, &req);
		if (!ret)
			ret = urel_msg_wait(req, NULL);
		if (ret)
			return fail("send", ret);
	}
	free(tok);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;
	const char *ip = getenv("UREL_ADDR") ? getenv("UREL_ADDR") : "127.0.0.1";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct urel_device *dev;
	struct urel_group *world;
	struct urel_job *job;
	struct urel_msg *m;
	struct urel_ep *ep;
	int32_t *pids;
	int ret, n;

	if (rounds < 1 || size < 8 || inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "usage: mpirun -np N ring [ROUNDS [SIZE >= 8]] (UREL_ADDR=ip)\n");
		return 2;
	}
	ret = urel_device_open(NULL, &dev);
	if (ret)
		return fail("open", ret);
	ret = urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep);
	if (ret)
		return fail("endpoint", ret);
	ret = urel_msg_open(ep, NULL, &m);
	if (ret)
		return fail("tagged messaging", ret);
	ret = urel_job_init_pmix(m, &job);
	if (ret)
		return fail("PMIx bootstrap (start with mpirun or srun --mpi=pmix)", ret);
	ret = urel_group_world(job, UREL_TAG_1, &world);
	if (ret)
		return fail("world group", ret);
	n = urel_group_size(world);
	if (n < 2) {
		fprintf(stderr, "ring: needs at least 2 ranks\n");
		return 2;
	}
	if (ring(world, rounds, size))
		return 1;
	pids = calloc((size_t)n, sizeof(*pids));
	int32_t me = (int32_t)getpid();

	ret = pids ? urel_group_allgather(world, &me, sizeof(me), pids) : -ENOMEM;
	if (ret)
		return fail("allgather", ret);
	if (pids[urel_group_rank(world)] != me)
		return fail("allgather", -EPROTO);
	ret = urel_group_barrier(world);
	if (ret)
		return fail("barrier", ret);
	if (urel_group_rank(world) == 0)
		printf("ring: %d ranks, %d rounds of %zu bytes: ok (rank %d is pid %d)\n", n,
		       rounds, size, n - 1, pids[n - 1]);
	free(pids);
	urel_group_free(world);
	urel_job_fini(job);
	urel_msg_close(m);
	urel_ep_destroy(ep);
	urel_device_close(dev);
	return 0;
}
