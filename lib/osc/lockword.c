// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the lock word of a window at its target, the one
 * place where an origin's exclusive lock taken with the kernel's remote
 * compare-and-swap (no target process involved) meets the lock manager.
 *
 *   0              free, and the manager holds nothing
 *   OWNER(r)       held exclusively by group rank r through the word
 *   MANAGED        the manager granted what is held (shared, self, queued)
 *   | WAITERS      the manager queued requests behind OWNER(r)
 *
 * An origin only ever swaps 0 -> OWNER(me) and OWNER(me) -> 0, so once
 * WAITERS or MANAGED is in the word, only the manager changes it: the
 * owner's release fails and it tells the manager instead, which hands the
 * word to the head of its queue. The kernel applies remote atomics with
 * the CPU's atomic instructions on the pinned page (usnic_rel_mr_atomic:
 * cmpxchg64), so these local atomics and the remote ones are atomic
 * against each other. The manager's calls run under the context lock.
 */
#include "osc.h"

static bool urel_osc_lw_cas(uint64_t *word, uint64_t *v, uint64_t to)
{
	return __atomic_compare_exchange_n(word, v, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int urel_osc_lw_owner(uint64_t v)
{
	v &= ~UREL_OSC_LW_WAITERS;
	if (!v || (v & UREL_OSC_LW_MANAGED) || v - 1 > INT32_MAX)
		return -1;
	return (int)(v - 1);
}

bool urel_osc_lw_take(uint64_t *word)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	for (;;) {
		if (v & UREL_OSC_LW_MANAGED)
			return true;
		if (!(v & ~UREL_OSC_LW_WAITERS)) {
			if (urel_osc_lw_cas(word, &v, UREL_OSC_LW_MANAGED))
				return true;
			continue;
		}
		/*
		 * Held through the word: mark it, so that its release comes to
		 * us. If the owner released meanwhile the swap fails and we
		 * look again: no release can slip between the two.
		 */
		if (v & UREL_OSC_LW_WAITERS)
			return false;
		if (urel_osc_lw_cas(word, &v, v | UREL_OSC_LW_WAITERS))
			return false;
	}
}

void urel_osc_lw_drop(uint64_t *word)
{
	uint64_t v = UREL_OSC_LW_MANAGED;

	/* Only our own hold: a word an origin owns stays its own. */
	urel_osc_lw_cas(word, &v, 0);
}

bool urel_osc_lw_handoff(uint64_t *word, int owner)
{
	uint64_t v = UREL_OSC_LW_OWNER(owner) | UREL_OSC_LW_WAITERS;

	return urel_osc_lw_cas(word, &v, UREL_OSC_LW_MANAGED);
}

bool urel_osc_lw_reclaim(uint64_t *word, int owner)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while (urel_osc_lw_owner(v) == owner) {
		if (urel_osc_lw_cas(word, &v, UREL_OSC_LW_MANAGED))
			return true;
	}
	return false;
}
