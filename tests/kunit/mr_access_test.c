// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the in-flight access count DEREG_MR waits on (mr_access.h).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "mr_access.h"

static void mr_access_idle_revoke(struct kunit *test)
{
	atomic_t a = ATOMIC_INIT(0);

	KUNIT_EXPECT_TRUE(test, usnic_rel_mr_access_begin(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_end(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_revoked(&a));
	/* Nothing in flight: no wait at all. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_revoke(&a));
	KUNIT_EXPECT_TRUE(test, usnic_rel_mr_access_revoked(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_begin(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_revoke(&a));
	KUNIT_EXPECT_EQ(test, atomic_read(&a), (int)USNIC_REL_MR_REVOKED);
}

static void mr_access_busy_revoke(struct kunit *test)
{
	atomic_t a = ATOMIC_INIT(0);
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_TRUE(test, usnic_rel_mr_access_begin(&a));
	KUNIT_EXPECT_TRUE(test, usnic_rel_mr_access_revoke(&a));
	/* Counted before: they finish; new ones are refused meanwhile. */
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_begin(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_end(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_end(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_begin(&a));
	/* Only the last one wakes the revoker, exactly once. */
	KUNIT_EXPECT_TRUE(test, usnic_rel_mr_access_end(&a));
	KUNIT_EXPECT_FALSE(test, usnic_rel_mr_access_begin(&a));
	KUNIT_EXPECT_EQ(test, atomic_read(&a), (int)USNIC_REL_MR_REVOKED);
}

#define RACE_ROUNDS	40
#define RACE_WORKERS	2

struct race_round {
	atomic_t cnt;
	atomic_t accesses;
	struct completion drained;
	bool freed;		/* what DEREG_MR's caller may do once it returns */
};

struct race {
	struct race_round *rounds;
	atomic_t violations;
	struct completion done[RACE_WORKERS];
};

struct race_worker {
	struct race *race;
	int id;
};

/* A peer: accesses each round until it is refused, checking none lands late. */
static int race_worker_fn(void *arg)
{
	struct race_worker *w = arg;
	struct race *race = w->race;
	int r;

	for (r = 0; r < RACE_ROUNDS; r++) {
		struct race_round *rd = &race->rounds[r];

		while (usnic_rel_mr_access_begin(&rd->cnt)) {
			if (READ_ONCE(rd->freed))
				atomic_inc(&race->violations);
			/* Every other access lets the revoker in midway, even on one CPU. */
			if (atomic_inc_return(&rd->accesses) & 1)
				schedule();
			else
				cpu_relax();
			if (READ_ONCE(rd->freed))
				atomic_inc(&race->violations);
			if (usnic_rel_mr_access_end(&rd->cnt))
				complete(&rd->drained);
			cond_resched();
		}
	}
	complete(&race->done[w->id]);
	return 0;
}

static void mr_access_race(struct kunit *test)
{
	struct race_worker workers[RACE_WORKERS];
	struct race race = {};
	int r, i, waited = 0;

	race.rounds = kunit_kcalloc(test, RACE_ROUNDS, sizeof(*race.rounds),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, race.rounds);
	for (r = 0; r < RACE_ROUNDS; r++)
		init_completion(&race.rounds[r].drained);
	for (i = 0; i < RACE_WORKERS; i++) {
		struct task_struct *t;

		init_completion(&race.done[i]);
		workers[i].race = &race;
		workers[i].id = i;
		t = kthread_run(race_worker_fn, &workers[i], "mr_access_%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	for (r = 0; r < RACE_ROUNDS; r++) {
		struct race_round *rd = &race.rounds[r];

		/* Let the peers get going on this round first. */
		while (atomic_read(&rd->accesses) < 4)
			schedule_timeout_uninterruptible(1);
		if (usnic_rel_mr_access_revoke(&rd->cnt)) {
			wait_for_completion(&rd->drained);
			waited++;
		}
		WRITE_ONCE(rd->freed, true);
	}
	for (i = 0; i < RACE_WORKERS; i++)
		wait_for_completion(&race.done[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&race.violations), 0);
	kunit_info(test, "%d of %d revokes waited for accesses under way\n",
		   waited, RACE_ROUNDS);
}

static struct kunit_case mr_access_cases[] = {
	KUNIT_CASE(mr_access_idle_revoke),
	KUNIT_CASE(mr_access_busy_revoke),
	KUNIT_CASE(mr_access_race),
	{}
};

static struct kunit_suite mr_access_suite = {
	.name = "usnic_rel_mr_access",
	.test_cases = mr_access_cases,
};

kunit_test_suite(mr_access_suite);
