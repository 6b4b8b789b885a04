/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: the tag-matching engine, pure (no I/O, no locks; the caller
 * serialises). Posted receives and unexpected messages each live in a hash
 * table of bins keyed by (source, match bits); posted receives that cannot
 * be hashed (any source, or an ignore mask) go to one wildcard list. Every
 * entry carries a stamp from one counter, so an arriving message takes the
 * oldest matching receive across its bin and the wildcard list (UCX's
 * scheme), and the unexpected queue keeps arrival order in a second list.
 */
#ifndef UREL_MSG_MATCH_H
#define UREL_MSG_MATCH_H

#include <stdbool.h>
#include <stdint.h>

/* A source that matches every source (a receive's wildcard). */
#define UREL_MATCH_ANY_SRC UINT32_MAX

struct urel_match_entry {
	struct urel_match_entry *next, *prev; /* in a bin or the wildcard list */
	struct urel_match_entry *anext, *aprev; /* unexpected: arrival order */
	uint64_t bits;
	uint64_t ignore; /* posted receives only */
	uint64_t stamp;
	uint32_t src;
	uint32_t hash; /* of (src, bits), while in a table: its bin without rehashing */
	uint8_t where; /* enum urel_match_where */
};

enum urel_match_where {
	UREL_MATCH_NONE = 0,
	UREL_MATCH_POSTED,
	UREL_MATCH_UNEXPECTED
};

struct urel_match_list {
	struct urel_match_entry *head, *tail;
};

struct urel_match_table {
	struct urel_match_list *bins;
	uint32_t mask; /* bins - 1 */
	uint32_t count;
};

struct urel_match {
	struct urel_match_table posted;
	struct urel_match_list wild; /* posted receives with an ignore mask or any source */
	uint32_t nwild;
	struct urel_match_table unexp;
	struct urel_match_list arrival; /* unexpected, oldest first (anext/aprev) */
	uint64_t stamp;
	uint64_t comparisons; /* entries examined, for tests and benchmarks */
};

int urel_match_init(struct urel_match *m);
void urel_match_fini(struct urel_match *m);

/* Does a receive (@src, @bits, @ignore) accept a message from @msrc with @mbits? */
static inline bool urel_match_accepts(uint32_t src, uint64_t bits, uint64_t ignore, uint32_t msrc,
				      uint64_t mbits)
{
	return (src == UREL_MATCH_ANY_SRC || src == msrc) && !((bits ^ mbits) & ~ignore);
}

/*
 * Queue receive @e (src, bits, ignore set) as the newest posted receive.
 * The caller has first looked for it among the unexpected messages.
 * Returns 0 or -ENOMEM (the tables could not grow; the entry is still queued).
 */
int urel_match_post(struct urel_match *m, struct urel_match_entry *e);

/* Queue message @e (src, bits set) as the newest unexpected message. */
int urel_match_add_unexpected(struct urel_match *m, struct urel_match_entry *e);

/*
 * The oldest posted receive accepting a message from @src with @bits,
 * taken off the queue; NULL when none does (the message is unexpected).
 */
struct urel_match_entry *urel_match_incoming(struct urel_match *m, uint32_t src, uint64_t bits);

/*
 * The oldest unexpected message a receive (@src, @bits, @ignore) accepts;
 * with @take it leaves the queue (receive, claim), else it stays (probe).
 */
struct urel_match_entry *urel_match_unexpected(struct urel_match *m, uint32_t src, uint64_t bits,
					       uint64_t ignore, bool take);

/* Any posted receive, taken off the queue (teardown); NULL when none is left. */
struct urel_match_entry *urel_match_take_posted(struct urel_match *m);

/*
 * Take every posted receive that names @src, and every one from any source,
 * off the queue and hand each to @fn, oldest first within the wildcard
 * list and within each bin (a peer failed: none of them can be trusted to
 * complete). Returns how many.
 */
unsigned int urel_match_drain_posted(struct urel_match *m, uint32_t src,
				     void (*fn)(void *arg, struct urel_match_entry *e), void *arg);

/* Take @e off whichever queue holds it (cancel); false if on none. */
bool urel_match_remove(struct urel_match *m, struct urel_match_entry *e);

#endif /* UREL_MSG_MATCH_H */
