// SPDX-License-Identifier: MIT
/*
 * In-VM test of jobs and groups with the explicit bootstrap
 * (urel_job_init), four ranks on lo, for each tag layout: ranks and peers,
 * barrier and allgather (every byte checked), dup gives a new context whose
 * traffic a receive of the original group never takes (even ANY_SOURCE,
 * ANY_TAG), collectives pass a user's ANY_TAG receive untouched, the
 * largest tag goes through while one more is refused, and a status decodes
 * to the sender's group rank and tag.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "urt_job.h"

#define NRANKS 4

static enum urel_tag_layout layout;

struct rec {
	int rank;
	uint32_t salt;
	char text[32];
};

static void t_job(struct urt_job *t)
{
	struct urel_group *world, *dup, *dup2;
	struct rec mine, all[NRANKS];
	struct urel_tag_limits lim;
	struct urel_msg_req *r, *wild;
	struct urel_msg_status st;
	struct urel_job *j;
	int src, tag, v = -1;

	URT_CHECK_EQ(urel_job_init(t->m, t->rank, t->size, t->addr, &j), 0);
	URT_CHECK_EQ(urel_job_rank(j), t->rank);
	URT_CHECK_EQ(urel_job_size(j), t->size);
	URT_CHECK_EQ(urel_job_peer(j, t->rank), 0);
	URT_CHECK_EQ(urel_job_peer(j, t->size), 0);
	URT_CHECK(urel_job_peer(j, (t->rank + 1) % t->size) != 0);
	URT_CHECK_EQ(urel_group_world(j, layout, &world), 0);
	URT_CHECK_EQ(urel_group_rank(world), t->rank);
	URT_CHECK_EQ(urel_group_size(world), t->size);
	URT_CHECK_EQ(urel_group_context(world), 1);

	/* A user's catch-all receive stays posted through the collectives. */
	URT_CHECK_EQ(urel_group_irecv(world, UREL_ANY_SOURCE, &v, sizeof(v), UREL_ANY_TAG, &wild),
		     0);
	URT_CHECK_EQ(urel_group_barrier(world), 0);
	memset(&mine, 0, sizeof(mine));
	mine.rank = t->rank;
	mine.salt = 0x5a5a0000u + (uint32_t)t->rank * 77;
	snprintf(mine.text, sizeof(mine.text), "rank %d of %d", t->rank, t->size);
	memset(all, 0, sizeof(all));
	URT_CHECK_EQ(urel_group_allgather(world, &mine, sizeof(mine), all), 0);
	for (int k = 0; k < t->size; k++) {
		char want[32];

		snprintf(want, sizeof(want), "rank %d of %d", k, t->size);
		URT_CHECK_EQ(all[k].rank, k);
		URT_CHECK_EQ(all[k].salt, 0x5a5a0000u + (uint32_t)k * 77);
		URT_CHECK(!strcmp(all[k].text, want));
	}
	URT_CHECK_EQ(urel_group_barrier(world), 0);
	URT_CHECK_EQ(urel_msg_cancel(wild), 0);
	URT_CHECK_EQ(urel_msg_wait(wild, NULL), -ECANCELED);

	/* Duplicates: new, agreed context ids. */
	URT_CHECK_EQ(urel_group_dup(world, &dup), 0);
	URT_CHECK_EQ(urel_group_dup(dup, &dup2), 0);
	URT_CHECK_EQ(urel_group_context(dup), 2);
	URT_CHECK_EQ(urel_group_context(dup2), 3);

	/* Rank 0 sends on dup first, then on world; world's wildcard receive takes world's. */
	if (t->rank == 0) {
		for (int to = 1; to < t->size; to++) {
			int a = 100 + to, b = 200 + to;

			URT_CHECK_EQ(urel_group_isend(dup, to, &a, sizeof(a), 5, 0, &r), 0);
			URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
			URT_CHECK_EQ(urel_group_isend(world, to, &b, sizeof(b), 5, 0, &r), 0);
			URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
		}
	} else {
		URT_CHECK_EQ(
			urel_group_irecv(world, UREL_ANY_SOURCE, &v, sizeof(v), UREL_ANY_TAG, &r),
			0);
		URT_CHECK_EQ(urel_msg_wait(r, &st), 0);
		URT_CHECK_EQ(v, 200 + t->rank);
		URT_CHECK_EQ(urel_group_source(world, &st, &src, &tag), 0);
		URT_CHECK_EQ(src, 0);
		URT_CHECK_EQ(tag, 5);
		/* The dup's message is decoded only by the dup. */
		URT_CHECK_EQ(urel_group_irecv(dup, 0, &v, sizeof(v), 5, &r), 0);
		URT_CHECK_EQ(urel_msg_wait(r, &st), 0);
		URT_CHECK_EQ(v, 100 + t->rank);
		URT_CHECK_EQ(urel_group_source(world, &st, &src, &tag), -EINVAL);
		URT_CHECK_EQ(urel_group_source(dup, &st, &src, &tag), 0);
	}
	URT_CHECK_EQ(urel_group_barrier(dup2), 0);

	/* Tag boundaries: the largest goes, one more and negatives are refused. */
	URT_CHECK_EQ(urel_tag_limits(layout, &lim), 0);
	if (t->rank == 1) {
		int x = 42;

		URT_CHECK_EQ(
			urel_group_isend(world, 2, &x, sizeof(x), lim.tag_max, UREL_MSG_SYNC, &r),
			0);
		URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
		if (lim.tag_max < INT32_MAX)
			URT_CHECK_EQ(
				urel_group_isend(world, 2, &x, sizeof(x), lim.tag_max + 1, 0, &r),
				-ERANGE);
		URT_CHECK_EQ(urel_group_isend(world, 2, &x, sizeof(x), -1, 0, &r), -EINVAL);
		/* To ourselves, as MPI allows: received and decoded as our own rank. */
		URT_CHECK_EQ(urel_group_isend(world, 1, &x, sizeof(x), 77, 0, &r), 0);
		URT_CHECK_EQ(urel_msg_wait(r, NULL), 0);
		x = 0;
		URT_CHECK_EQ(urel_group_irecv(world, 1, &x, sizeof(x), 77, &r), 0);
		URT_CHECK_EQ(urel_msg_wait(r, &st), 0);
		URT_CHECK_EQ(x, 42);
		URT_CHECK_EQ(urel_group_source(world, &st, &src, &tag), 0);
		URT_CHECK_EQ(src, 1);
		URT_CHECK_EQ(tag, 77);
		URT_CHECK_EQ(urel_group_isend(world, 9, &x, sizeof(x), 0, 0, &r), -EINVAL);
	} else if (t->rank == 2) {
		URT_CHECK_EQ(urel_group_irecv(world, 1, &v, sizeof(v), lim.tag_max, &r), 0);
		URT_CHECK_EQ(urel_msg_wait(r, &st), 0);
		URT_CHECK_EQ(v, 42);
		URT_CHECK_EQ(urel_group_source(world, &st, &src, &tag), 0);
		URT_CHECK_EQ(src, 1);
		URT_CHECK_EQ(tag, lim.tag_max);
	}
	URT_CHECK_EQ(urel_group_barrier(world), 0);
	urel_group_free(dup2);
	urel_group_free(dup);
	urel_group_free(world);
	URT_CHECK_EQ(urel_job_fini(j), 0);
}

int main(void)
{
	static const enum urel_tag_layout layouts[] = { UREL_TAG_1, UREL_TAG_2, UREL_TAG_FULL };
	struct urel_msg *m = NULL;
	struct urel_job *j;
	int ret = 0;

	/* Without a launcher's environment there is no PMIx job. */
	URT_CHECK(urel_job_init_pmix(m, &j) == -EINVAL);
	urt_job_no_av = true;
	for (unsigned int i = 0; i < 3; i++) {
		layout = layouts[i];
		ret |= urt_job_run(NRANKS, NULL, t_job, 400);
	}
	if (ret)
		urt_failures++;
	return urt_done("vm_msg_job");
}
