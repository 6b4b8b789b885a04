// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: RFC 6298 retransmission timeout in integer microseconds.
 *
 *	first sample R:	SRTT = R, RTTVAR = R / 2
 *	later samples:	RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|
 *			SRTT = 7/8 SRTT + 1/8 R
 *	RTO = SRTT + max(G, 4 RTTVAR'), clamped to [min, max]
 *
 * where RTTVAR' is the largest RTTVAR of the last USNIC_REL_RTTVAR_HOLD_US,
 * decaying by a quarter per period after that: the variation a stalled VM
 * showed once keeps covering the next stall (Linux TCP holds its mdev_max
 * for a round trip for the same reason; a round trip is far too short for
 * stalls that recur every few tens of milliseconds).
 *
 * Each timeout doubles the RTO (clamped to max) until a valid sample; after
 * retry_limit timeouts without progress the peer is dead.
 */
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>

#include <kunit/visibility.h>
#include "rto.h"

static void usnic_rel_rto_update(struct usnic_rel_rto *r)
{
	u64 rto = (u64)r->srtt_us +
		  max_t(u64, USNIC_REL_RTO_GRANULARITY_US,
			4ULL * r->rttvar_peak_us);

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

/* Let the held RTTVAR peak decay for the periods past, then take the new one. */
static void usnic_rel_rto_peak(struct usnic_rel_rto *r, u64 now_us)
{
	u64 periods = 0;

	if (now_us > r->peak_since_us)
		periods = div_u64(now_us - r->peak_since_us,
				  USNIC_REL_RTTVAR_HOLD_US);
	/* Past 32 quarters off, any peak has decayed to RTTVAR. */
	if (periods >= 32)
		r->rttvar_peak_us = r->rttvar_us;
	while (periods-- && r->rttvar_peak_us > r->rttvar_us)
		r->rttvar_peak_us -= (r->rttvar_peak_us - r->rttvar_us + 3) / 4;
	if (r->rttvar_us >= r->rttvar_peak_us) {
		r->rttvar_peak_us = r->rttvar_us;
		r->peak_since_us = now_us;
	} else if (now_us - r->peak_since_us >= USNIC_REL_RTTVAR_HOLD_US) {
		r->peak_since_us = now_us;
	}
}

/**
 * usnic_rel_rto_sample_at() - feed one RTT measurement taken at @now_us
 * @r: the estimator
 * @rtt_us: the sample; only from packets never retransmitted (Karn)
 * @now_us: a monotonic clock, for the hold of the RTTVAR peak
 *
 * A valid sample ends any backoff and proves the peer alive.
 */
void usnic_rel_rto_sample_at(struct usnic_rel_rto *r, u32 rtt_us, u64 now_us)
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
	usnic_rel_rto_peak(r, now_us);
	usnic_rel_rto_update(r);
	r->backoff = 0;
	r->retries = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_sample_at);

/* usnic_rel_rto_sample_at() now. */
void usnic_rel_rto_sample(struct usnic_rel_rto *r, u32 rtt_us)
{
	usnic_rel_rto_sample_at(r, rtt_us, div_u64(ktime_get_ns(), NSEC_PER_USEC));
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_sample);

/**
 * usnic_rel_rto_probe_us() - timeout of the tail-loss probe (RFC 8985's PTO)
 * @r: the estimator
 * @ack_delay_us: how long the peer may hold back its ACK
 * @floor_us: the least timeout, for the scheduling jitter of the hosts
 *
 * Two round trips plus the peer's delayed ACK plus twice the held RTTVAR:
 * the peer may hold its ACK back whenever it got fewer than ack_every
 * packets, so (as RFC 8985 adds WCDelAckT to a flight of one) a probe sent
 * earlier would often duplicate a packet that arrived, and the variation
 * covers a host that answers late. Never more than the RTO, which takes
 * over from there.
 *
 * A backed-off RTO does not stop it: it is armed once per flight, after an
 * ACK that freed packets, so an earlier loss's backoff (which lasts until an
 * RTT sample, rare under heavy loss since every ACK of a recovery covers a
 * resend) does not make the next tail loss wait for the doubled timeout.
 *
 * Return: the timeout in microseconds; 0 without an RTT sample.
 */
u32 usnic_rel_rto_probe_us(const struct usnic_rel_rto *r, u32 ack_delay_us,
			   u32 floor_us)
{
	u64 pto;

	if (!r->has_sample)
		return 0;
	pto = 2ULL * r->srtt_us + ack_delay_us + 2ULL * r->rttvar_peak_us;
	pto = max_t(u64, pto, floor_us);
	return min_t(u64, pto, usnic_rel_rto_current_us(r));
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_probe_us);

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
	/* No doubling past the ceiling: each one must be undone by progress. */
	if (usnic_rel_rto_current_us(r) < r->max_us)
		r->backoff++;
	if (r->retries < U32_MAX)
		r->retries++;
	return r->retries >= retry_limit;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_timeout);

/*
 * The peer acknowledged something new: it is alive, so the retry count
 * starts over. Without a valid sample (Karn) the RTO itself stays, but one
 * doubling of the backoff goes: the path delivered within this timeout.
 * Under heavy loss every ACK may cover a resend, so no sample ever comes,
 * and a backoff kept until one would pace the whole transfer at one resend
 * per rto_max_us until stall_timeout_ms ends it. A real rise of the RTT
 * doubles it again at the next timeout.
 */
void usnic_rel_rto_progress(struct usnic_rel_rto *r)
{
	r->retries = 0;
	if (r->backoff)
		r->backoff--;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_progress);

/*
 * The peer answered a resend saying it had no buffer for it (F_RNR): alive
 * and reachable, so neither a retry nor a reason to back off. The next
 * resend comes one plain RTO later and finds out whether buffers came back;
 * a backed-off timer would leave a ready receiver waiting up to rto_max_us.
 */
void usnic_rel_rto_not_ready(struct usnic_rel_rto *r)
{
	r->retries = 0;
	r->backoff = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_not_ready);

/*
 * A verified pairing. The HELLO's retries before it backed the timer off:
 * they say its packets were lost, not how long the path takes. Kept, that
 * backoff (up to rto_max_us) would pace the first recovery of the data,
 * whose ACKs all cover resends and so never give the sample that ends it.
 */
void usnic_rel_rto_paired(struct usnic_rel_rto *r)
{
	r->retries = 0;
	r->backoff = 0;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_rto_paired);
