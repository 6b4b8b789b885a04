// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: urel_msg_stats(), in its own object because
 * of its two versions (.symver): the provider links the static library
 * under its own version script, and never pulls this object in.
 */
#include <errno.h>
#include <string.h>

#include "../internal.h"
#include "msg.h"

UREL_API int urel_msg_stats_v09(struct urel_msg *m, struct urel_msg_stats *st);
UREL_API int urel_msg_stats_v08(struct urel_msg *m, struct urel_msg_stats_v08 *st);
UREL_API int urel_msg_stats_v02(struct urel_msg *m, struct urel_msg_stats_v02 *st);

/*
 * LIBUSNICREL_0.8 added late_wakeups at the end of struct urel_msg_stats,
 * LIBUSNICREL_0.9 standbacks.
 */
__asm__(".symver urel_msg_stats_v09, urel_msg_stats@@LIBUSNICREL_0.9");
UREL_API int urel_msg_stats_v09(struct urel_msg *m, struct urel_msg_stats *st)
{
	if (!m || !st)
		return -EINVAL;
	urel_msg_lock(&m->lock);
	*st = (struct urel_msg_stats){
		.unexpected = m->match.unexp.count,
		.unexpected_bytes = m->unexp_bytes,
		.unexpected_peak_bytes = m->unexp_peak,
		.early = m->early,
		.early_bytes = m->early_bytes,
		.dropped = m->dropped,
		.peers_failed = m->peers_failed,
		.keepalives = m->keepalives,
		.deferred = m->deferred,
		.late_wakeups = __atomic_load_n(&m->waker.late_wakeups, __ATOMIC_RELAXED),
		.standbacks = __atomic_load_n(&m->standbacks, __ATOMIC_RELAXED),
	};
	urel_msg_unlock(&m->lock);
	return 0;
}

/* An older version's struct is a prefix of today's: fill only @size bytes. */
static int urel_msg_stats_prefix(struct urel_msg *m, void *st, size_t size)
{
	struct urel_msg_stats all;
	int ret;

	if (!st)
		return -EINVAL;
	ret = urel_msg_stats_v09(m, &all);
	if (!ret)
		memcpy(st, &all, size);
	return ret;
}

/* Programs linked against 0.8 pass the struct without standbacks. */
__asm__(".symver urel_msg_stats_v08, urel_msg_stats@LIBUSNICREL_0.8");
UREL_API int urel_msg_stats_v08(struct urel_msg *m, struct urel_msg_stats_v08 *st)
{
	return urel_msg_stats_prefix(m, st, sizeof(*st));
}

/* Programs linked before 0.8 pass the struct without late_wakeups: fill only that. */
__asm__(".symver urel_msg_stats_v02, urel_msg_stats@LIBUSNICREL_0.2");
UREL_API int urel_msg_stats_v02(struct urel_msg *m, struct urel_msg_stats_v02 *st)
{
	return urel_msg_stats_prefix(m, st, sizeof(*st));
}
