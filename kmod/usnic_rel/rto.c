// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: RFC 6298 retransmission timeout in integer microseconds.
 *
 *	first sample R:	SRTT = R, RTTVAR = R / 2
 *	later samples:	RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|
 *			SRTT = 7/8 SRTT + 1/8 R
 *	RTO = SRTT + max(G, 4 RTTVAR), clamped to [min, max]
 *
 * Each timeout doubles the RTO (clamped to max) until a valid sample; after
 * retry_limit timeouts without progress the peer is dead.
 */
#include <linux/minmax.h>
#include <linux/module.h>

#include <kunit/visibility.h>
#include "rto.h"

static void usnic_rel_rto_update(struct usnic_rel_rto *r)
{
	u64 rto = (u64)r->srtt_us +
		  max_t(u64, USNIC_REL_RTO_GRANULARITY_US, 4ULL * r->rttvar_us);

	r->rto_us = clamp_t(u64, rto, r->min_us, r->max_us);
}

/**
 * usnic_rel_rto_init() - start with no RTT knowledge
 * @r: the estimator
 * @min_us: RTO floor, at least 1
 * @max_us: RTO ceiling, at least @min_us
 */
void usnic_rel_rto_init(struct usnic_rel_rto *r, u32 min_us, u32 max_us)
{
	memset(r, 0, sizeof(*r));
	r->min_us = max(min_us, 1U);
	r->max_us = max(max_us, r->min_us);
	r->rto_us = clamp_t(u32, USNIC_REL_RTO_INITIAL_US, r->min_us, r->max_us);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_init);

/**
 * usnic_rel_rto_sample() - feed one RTT measurement
 * @r: the estimator
 * @rtt_us: the sample; only from packets never retransmitted (Karn)
 *
 * A valid sample ends any backoff and proves the peer alive.
 */
void usnic_rel_rto_sample(struct usnic_rel_rto *r, u32 rtt_us)
{
	u32 delta;

	rtt_us = min_t(u32, rtt_us, USNIC_REL_RTT_MAX_US);
	if (!r->has_sample) {
		r->srtt_us = rtt_us;
		r->rttvar_us = rtt_us / 2;
		r->has_sample = true;
	} else {
		delta = r->srtt_us > rtt_us ? r->srtt_us - rtt_us :
					      rtt_us - r->srtt_us;
		/* Both fit: each operand is at most USNIC_REL_RTT_MAX_US. */
		r->rttvar_us = (3 * r->rttvar_us + delta) / 4;
		r->srtt_us = (7 * r->srtt_us + rtt_us) / 8;
	}
	usnic_rel_rto_update(r);
	r->backoff = 0;
	r->retries = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_sample);

/* The timeout to arm now: the RTO doubled per timeout, at most max_us. */
u32 usnic_rel_rto_current_us(const struct usnic_rel_rto *r)
{
	u64 rto = r->rto_us;

	/* Past 31 doublings any RTO exceeds the u32 ceiling. */
	if (r->backoff >= 32)
		return r->max_us;
	rto <<= r->backoff;
	return min_t(u64, rto, r->max_us);
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_current_us);

/**
 * usnic_rel_rto_timeout() - the retransmit timer expired
 * @r: the estimator
 * @retry_limit: timeouts in a row that mean the peer is gone
 *
 * Return: true when the peer must be declared dead.
 */
bool usnic_rel_rto_timeout(struct usnic_rel_rto *r, u32 retry_limit)
{
	if (r->backoff < 32)
		r->backoff++;
	if (r->retries < U32_MAX)
		r->retries++;
	return r->retries >= retry_limit;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_timeout);

/*
 * The peer acknowledged something new. Without a valid sample (Karn) the
 * backed-off RTO stays, but the peer is alive: reset the retry count.
 */
void usnic_rel_rto_progress(struct usnic_rel_rto *r)
{
	r->retries = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_progress);
