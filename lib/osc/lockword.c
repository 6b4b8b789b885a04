// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: the lock word of a window at its target, the one
 * place where an origin's lock taken with the kernel's remote
 * compare-and-swap (no target process involved) meets the lock manager.
 *
 *   0              free, and the manager holds nothing
 *   OWNER(r)       held exclusively by group rank r through the word
 *   READER(r)|...  held shared by these ranks (one bit each) through the word
 *   MANAGED        the manager granted what is held (shared, self, queued)
 *   | WAITERS      the manager queued requests behind the word's holders
 *
 * An origin only ever swaps a word without MANAGED or WAITERS: 0 ->
 * OWNER(me), readers -> readers|READER(me), and back. Once WAITERS or
 * MANAGED is in the word, no origin adds itself (a queued request is never
 * overtaken) and only the manager takes the word: the exclusive owner's
 * release fails and it tells the manager, which hands the word to the head
 * of its queue; the last reader leaves its bit in and tells the manager,
 * which swaps it out: until then the word names the reader, so that one
 * dying before its notice arrives is found and its bit taken back. The
 * manager clears a mark once its queue empties. The kernel applies remote
 * atomics with the CPU's atomic instructions on the pinned page
 * (usnic_rel_mr_atomic: cmpxchg64), so these local atomics and the remote
 * ones are atomic against each other. The manager's calls run under the
 * context lock.
 */
#include "osc.h"

static bool urel_osc_lw_cas(uint64_t *word, uint64_t *v, uint64_t to)
{
	return __atomic_compare_exchange_n(word, v, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int urel_osc_lw_owner(uint64_t v)
{
	v &= ~UREL_OSC_LW_WAITERS;
	if (!(v & UREL_OSC_LW_EXCL) || (v & UREL_OSC_LW_MANAGED))
		return -1;
	v &= ~UREL_OSC_LW_EXCL;
	return v > INT32_MAX ? -1 : (int)v;
}

bool urel_osc_lw_readers_only(uint64_t v)
{
	return (v & UREL_OSC_LW_READERS) &&
	       !(v & (UREL_OSC_LW_WAITERS | UREL_OSC_LW_MANAGED | UREL_OSC_LW_EXCL));
}

static bool urel_osc_lw_reader(uint64_t v, int r)
{
	return r >= 0 && r < UREL_OSC_LW_READERS_MAX &&
	       !(v & (UREL_OSC_LW_MANAGED | UREL_OSC_LW_EXCL)) && (v & UREL_OSC_LW_READER(r));
}

bool urel_osc_lw_holds(uint64_t v, int r)
{
	return urel_osc_lw_owner(v) == r || urel_osc_lw_reader(v, r);
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

bool urel_osc_lw_share(uint64_t *word, uint64_t bit)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while (urel_osc_lw_readers_only(v)) {
		if (urel_osc_lw_cas(word, &v, v | bit))
			return true;
	}
	return false;
}

void urel_osc_lw_unshare(uint64_t *word, uint64_t bit)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while ((v & bit) && !(v & (UREL_OSC_LW_MANAGED | UREL_OSC_LW_EXCL))) {
		if (urel_osc_lw_cas(word, &v, v & ~bit))
			return;
	}
}

bool urel_osc_lw_release_to(uint64_t seen, uint64_t bit, uint64_t *to)
{
	if ((seen & UREL_OSC_LW_WAITERS) && (seen & UREL_OSC_LW_READERS) == bit)
		return false;
	*to = seen & ~bit;
	return true;
}

void urel_osc_lw_mark(uint64_t *word)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while ((v & UREL_OSC_LW_READERS) &&
	       !(v & (UREL_OSC_LW_WAITERS | UREL_OSC_LW_MANAGED | UREL_OSC_LW_EXCL))) {
		if (urel_osc_lw_cas(word, &v, v | UREL_OSC_LW_WAITERS))
			return;
	}
}

void urel_osc_lw_drop(uint64_t *word)
{
	uint64_t v = UREL_OSC_LW_MANAGED;

	/* Only our own hold: a word an origin holds stays its own. */
	if (urel_osc_lw_cas(word, &v, 0))
		return;
	/* The last reader left while we had a queue, since emptied: nobody waits. */
	v = UREL_OSC_LW_WAITERS;
	urel_osc_lw_cas(word, &v, 0);
}

void urel_osc_lw_unmark(uint64_t *word)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while ((v & UREL_OSC_LW_WAITERS) && (v & UREL_OSC_LW_READERS) &&
	       !(v & (UREL_OSC_LW_MANAGED | UREL_OSC_LW_EXCL))) {
		if (urel_osc_lw_cas(word, &v, v & ~UREL_OSC_LW_WAITERS))
			return;
	}
}

bool urel_osc_lw_leave(uint64_t *word, int r)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE), to;

	while (urel_osc_lw_reader(v, r)) {
		to = v & ~UREL_OSC_LW_READER(r);
		/* The last one out of a marked word: ours to pass to the queue. */
		if (to == UREL_OSC_LW_WAITERS)
			to = UREL_OSC_LW_MANAGED;
		if (urel_osc_lw_cas(word, &v, to))
			return true;
	}
	return false;
}

bool urel_osc_lw_handoff(uint64_t *word, int owner)
{
	uint64_t v = UREL_OSC_LW_OWNER(owner) | UREL_OSC_LW_WAITERS;

	return urel_osc_lw_cas(word, &v, UREL_OSC_LW_MANAGED);
}

bool urel_osc_lw_reclaim(uint64_t *word, int r)
{
	uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	for (;;) {
		if (urel_osc_lw_owner(v) == r) {
			if (urel_osc_lw_cas(word, &v, UREL_OSC_LW_MANAGED))
				return true;
		} else if (urel_osc_lw_reader(v, r)) {
			/* The others keep theirs; WAITERS stays for the last one. */
			if (urel_osc_lw_cas(word, &v, v & ~UREL_OSC_LW_READER(r)))
				return true;
		} else {
			return false;
		}
	}
}
