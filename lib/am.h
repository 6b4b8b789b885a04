/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: active messages. Every message of the upper layers starts
 * with a small header naming a handler, so several protocols share one
 * endpoint's receives: the endpoint's receive handler becomes a dispatcher
 * over a per-endpoint table. Multi-byte fields are little-endian.
 */
#ifndef UREL_AM_H
#define UREL_AM_H

#include <endian.h>
#include <stdint.h>

#include <usnicrel.h>

#define UREL_AM_VERSION 1

/* Handler ids. */
enum {
	UREL_AM_MSG = 1,
	UREL_AM_OSC = 2,
	UREL_AM_NR = 4
};

struct urel_am_hdr {
	uint8_t version;
	uint8_t handler;
	uint8_t op; /* the handler's own */
	uint8_t flags; /* the handler's own */
	uint32_t seq; /* the handler's own (tagged messages: per-peer sequence) */
};
_Static_assert(sizeof(struct urel_am_hdr) == 8, "am header");

struct urel_am;

/*
 * A handler sees each message with its header parsed; @payload and @len are
 * the bytes after it, valid during the call only. It returns 0, or
 * UREL_RECV_AGAIN when it changed nothing and wants the message offered
 * again later (it could not allocate).
 */
typedef int (*urel_am_fn)(void *arg, const struct urel_am_hdr *h, const struct urel_completion *c,
			  const void *payload, size_t len);

/*
 * The dispatcher of @ep (created on first use, counted); -EBUSY if @ep has
 * another handler. The last put waits for a dispatch of @ep under way in
 * another thread, and must not come from a handler of @ep.
 */
int urel_am_get(struct urel_ep *ep, struct urel_am **amp);
void urel_am_put(struct urel_am *am);

/*
 * Unregister returns once no other thread runs or can still call the
 * handler, so its argument may be freed then. It waits for that thread's
 * dispatch: no handler may wait for the caller, nor register or
 * unregister on the same dispatcher.
 */
int urel_am_register(struct urel_am *am, unsigned int id, urel_am_fn fn, void *arg);
void urel_am_unregister(struct urel_am *am, unsigned int id);

struct urel_device *urel_am_device(const struct urel_am *am);

/* Messages dropped: too short, another version, no handler. */
uint64_t urel_am_dropped(const struct urel_am *am);

static inline struct urel_am_hdr urel_am_hdr(unsigned int handler, unsigned int op,
					     unsigned int flags, uint32_t seq)
{
	struct urel_am_hdr h = {
		.version = UREL_AM_VERSION,
		.handler = (uint8_t)handler,
		.op = (uint8_t)op,
		.flags = (uint8_t)flags,
		.seq = htole32(seq),
	};
	return h;
}

#endif /* UREL_AM_H */
