// SPDX-License-Identifier: MIT
/*
 * Host unit test of the windows' sync-type state machine alone
 * (lib/osc/sync.c): every legal transition, and every misuse refused with
 * UREL_WIN_ERR_SYNC while the state stays exactly as it was (checked for
 * every call in every state by comparing the whole struct).
 */
#include <stdint.h>
#include <string.h>

#include "../../lib/osc/osc.h"

#include "urt.h"

#define S(t) UREL_OSC_SYNC_##t

/* A refused call must leave every field as it was. */
#define REFUSED(call, s)                                                                           \
	do {                                                                                       \
		struct urel_osc_sync before_ = (s);                                                \
		URT_CHECK_EQ(call, UREL_WIN_ERR_SYNC);                                             \
		URT_CHECK(!memcmp(&before_, &(s), sizeof(before_)));                               \
	} while (0)

static void check_fence(void)
{
	struct urel_osc_sync s = { 0 };

	REFUSED(urel_osc_sync_op(&s, true), s); /* no epoch */
	URT_CHECK_EQ(urel_osc_sync_fence(&s, UREL_WIN_MODE_NOPRECEDE), 0);
	URT_CHECK_EQ(s.type, S(FENCE));
	/* The epoch opens at the first operation. */
	URT_CHECK_EQ(urel_osc_sync_op(&s, false), 0);
	URT_CHECK_EQ(s.type, S(FENCE_EPOCH));
	REFUSED(urel_osc_sync_fence(&s, UREL_WIN_MODE_NOPRECEDE), s);
	REFUSED(urel_osc_sync_lock(&s, false, false), s);
	REFUSED(urel_osc_sync_lock_all(&s, false), s);
	REFUSED(urel_osc_sync_start(&s), s);
	REFUSED(urel_osc_sync_post(&s), s);
	REFUSED(urel_osc_sync_free(&s), s);
	REFUSED(urel_osc_sync_flush(&s, true), s);
	URT_CHECK_EQ(urel_osc_sync_fence(&s, 0), 0);
	URT_CHECK_EQ(s.type, S(FENCE));
	URT_CHECK_EQ(urel_osc_sync_free(&s), 0); /* after a fence with no operation */
	URT_CHECK_EQ(urel_osc_sync_fence(&s, UREL_WIN_MODE_NOSUCCEED), 0);
	URT_CHECK_EQ(s.type, S(NONE));
}

static void check_lock(void)
{
	struct urel_osc_sync s = { 0 };

	REFUSED(urel_osc_sync_unlock(&s, false), s); /* unlock without lock */
	REFUSED(urel_osc_sync_unlock(&s, true), s);
	REFUSED(urel_osc_sync_flush(&s, true), s);
	URT_CHECK_EQ(urel_osc_sync_lock(&s, false, true), 0);
	URT_CHECK_EQ(s.type, S(LOCK_NO_CHECK));
	REFUSED(urel_osc_sync_lock(&s, true, true), s); /* second lock on the same target */
	REFUSED(urel_osc_sync_op(&s, false), s); /* a target not locked */
	REFUSED(urel_osc_sync_lock_all(&s, false), s);
	REFUSED(urel_osc_sync_start(&s), s);
	REFUSED(urel_osc_sync_fence(&s, 0), s);
	REFUSED(urel_osc_sync_free(&s), s);
	REFUSED(urel_osc_sync_unlock_all(&s), s);
	REFUSED(urel_osc_sync_complete(&s), s);
	URT_CHECK_EQ(urel_osc_sync_op(&s, true), 0);
	URT_CHECK_EQ(urel_osc_sync_flush(&s, true), 0);
	REFUSED(urel_osc_sync_flush(&s, false), s);
	/* A checked lock on a second target makes the epoch LOCK. */
	URT_CHECK_EQ(urel_osc_sync_lock(&s, false, false), 0);
	URT_CHECK_EQ(s.type, S(LOCK));
	URT_CHECK_EQ(s.locks, 2);
	URT_CHECK_EQ(urel_osc_sync_unlock(&s, true), 0);
	URT_CHECK_EQ(s.type, S(LOCK));
	URT_CHECK_EQ(urel_osc_sync_unlock(&s, true), 0);
	URT_CHECK_EQ(s.type, S(NONE));
	REFUSED(urel_osc_sync_unlock(&s, true), s);
	/* From a fence that opened no epoch, a lock is allowed. */
	URT_CHECK_EQ(urel_osc_sync_fence(&s, 0), 0);
	URT_CHECK_EQ(urel_osc_sync_lock(&s, false, false), 0);
	URT_CHECK_EQ(s.type, S(LOCK));
	URT_CHECK_EQ(urel_osc_sync_unlock(&s, true), 0);
}

static void check_lock_all(void)
{
	struct urel_osc_sync s = { 0 };

	REFUSED(urel_osc_sync_unlock_all(&s), s);
	URT_CHECK_EQ(urel_osc_sync_lock_all(&s, false), 0);
	URT_CHECK_EQ(s.type, S(LOCK_ALL));
	REFUSED(urel_osc_sync_lock_all(&s, false), s);
	REFUSED(urel_osc_sync_lock(&s, false, false), s); /* lock inside lock_all */
	REFUSED(urel_osc_sync_unlock(&s, true), s);
	REFUSED(urel_osc_sync_start(&s), s);
	REFUSED(urel_osc_sync_fence(&s, 0), s);
	REFUSED(urel_osc_sync_free(&s), s);
	URT_CHECK_EQ(urel_osc_sync_op(&s, false), 0); /* every target is covered */
	URT_CHECK_EQ(urel_osc_sync_flush(&s, false), 0);
	URT_CHECK_EQ(urel_osc_sync_unlock_all(&s), 0);
	URT_CHECK_EQ(s.type, S(NONE));
	URT_CHECK_EQ(urel_osc_sync_lock_all(&s, true), 0);
	URT_CHECK_EQ(s.type, S(LOCK_ALL_NO_CHECK));
	URT_CHECK_EQ(urel_osc_sync_unlock_all(&s), 0);
}

static void check_pscw(void)
{
	struct urel_osc_sync s = { 0 };

	REFUSED(urel_osc_sync_complete(&s), s); /* complete without start */
	REFUSED(urel_osc_sync_wait(&s), s); /* wait without post */
	URT_CHECK_EQ(urel_osc_sync_start(&s), 0);
	URT_CHECK_EQ(s.type, S(PSCW));
	REFUSED(urel_osc_sync_start(&s), s); /* nested start */
	REFUSED(urel_osc_sync_lock(&s, false, false), s); /* lock inside PSCW */
	REFUSED(urel_osc_sync_lock_all(&s, false), s);
	REFUSED(urel_osc_sync_fence(&s, 0), s);
	REFUSED(urel_osc_sync_op(&s, false), s); /* not in the access group */
	REFUSED(urel_osc_sync_free(&s), s);
	URT_CHECK_EQ(urel_osc_sync_op(&s, true), 0);
	/* Exposure beside access. */
	URT_CHECK_EQ(urel_osc_sync_post(&s), 0);
	REFUSED(urel_osc_sync_post(&s), s);
	URT_CHECK_EQ(urel_osc_sync_complete(&s), 0);
	URT_CHECK_EQ(s.type, S(NONE));
	REFUSED(urel_osc_sync_fence(&s, 0), s); /* still exposed */
	REFUSED(urel_osc_sync_free(&s), s);
	URT_CHECK_EQ(urel_osc_sync_wait(&s), 0);
	URT_CHECK_EQ(urel_osc_sync_free(&s), 0);
}

/* A no_locks window refuses every passive epoch, in every state, and keeps fence and PSCW. */
static void check_no_locks(void)
{
	struct urel_osc_sync s = { .no_locks = true }, before;

	for (int round = 0; round < 4; round++) {
		before = s;
		URT_CHECK_EQ(urel_osc_sync_lock(&s, false, false), UREL_WIN_ERR_NOLOCKS);
		URT_CHECK_EQ(urel_osc_sync_lock(&s, false, true), UREL_WIN_ERR_NOLOCKS);
		URT_CHECK_EQ(urel_osc_sync_lock_all(&s, false), UREL_WIN_ERR_NOLOCKS);
		URT_CHECK_EQ(urel_osc_sync_lock_all(&s, true), UREL_WIN_ERR_NOLOCKS);
		URT_CHECK(!memcmp(&before, &s, sizeof(s)));
		REFUSED(urel_osc_sync_unlock(&s, true), s);
		REFUSED(urel_osc_sync_unlock_all(&s), s);
		switch (round) {
		case 0: /* NONE -> FENCE */
			URT_CHECK_EQ(urel_osc_sync_fence(&s, 0), 0);
			break;
		case 1: /* FENCE -> FENCE_EPOCH */
			URT_CHECK_EQ(urel_osc_sync_op(&s, false), 0);
			URT_CHECK_EQ(s.type, S(FENCE_EPOCH));
			break;
		case 2: /* FENCE_EPOCH -> NONE -> PSCW, exposed */
			URT_CHECK_EQ(urel_osc_sync_fence(&s, UREL_WIN_MODE_NOSUCCEED), 0);
			URT_CHECK_EQ(urel_osc_sync_post(&s), 0);
			URT_CHECK_EQ(urel_osc_sync_start(&s), 0);
			URT_CHECK_EQ(s.type, S(PSCW));
			break;
		default:
			URT_CHECK_EQ(urel_osc_sync_op(&s, true), 0);
			URT_CHECK_EQ(urel_osc_sync_complete(&s), 0);
			URT_CHECK_EQ(urel_osc_sync_wait(&s), 0);
			URT_CHECK_EQ(urel_osc_sync_free(&s), 0);
			URT_CHECK(s.no_locks);
		}
	}
}

int main(void)
{
	check_fence();
	check_lock();
	check_lock_all();
	check_pscw();
	check_no_locks();
	return urt_done("unit_osc_sync");
}
