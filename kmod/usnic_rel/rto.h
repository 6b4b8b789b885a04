/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: retransmission timeout of one peer (RFC 6298), with backoff and
 * the retry count that declares the peer dead.
 */
#ifndef _USNIC_REL_RTO_H
#define _USNIC_REL_RTO_H

#include <linux/types.h>

/*
 * RTO before the first sample. RFC 6298 says 1 s for the Internet; one LAN
 * hop needs far less, and a spurious early retransmit costs one duplicate.
 */
#define USNIC_REL_RTO_INITIAL_US	50000
/* Clock granularity G of RFC 6298: hrtimers are far finer than this. */
#define USNIC_REL_RTO_GRANULARITY_US	100
/* Samples above this are bogus (clock jumps) and are clamped. */
#define USNIC_REL_RTT_MAX_US		60000000
/*
 * The largest RTTVAR is held this long (then decays by a quarter per
 * period): a host that stalls a VM every few tens of milliseconds spikes
 * RTTVAR once per stall, and RFC 6298's RTTVAR forgets a spike within a
 * dozen samples, long before the next stall.
 */
#define USNIC_REL_RTTVAR_HOLD_US	100000

struct usnic_rel_rto {
	u32 srtt_us;
	u32 rttvar_us;
	u32 rto_us;	/* before backoff, within [min_us, max_us] */
	u32 min_us;
	u32 max_us;
	u32 backoff;	/* timeouts since the last valid sample */
	u32 retries;	/* timeouts since the peer last made progress */
	u32 rttvar_peak_us;	/* largest RTTVAR of the recent periods */
	u64 peak_since_us;	/* start of the peak's current period */
	bool has_sample;
};

void usnic_rel_rto_init(struct usnic_rel_rto *r, u32 min_us, u32 max_us);
void usnic_rel_rto_sample(struct usnic_rel_rto *r, u32 rtt_us);
void usnic_rel_rto_sample_at(struct usnic_rel_rto *r, u32 rtt_us, u64 now_us);
u32 usnic_rel_rto_probe_us(const struct usnic_rel_rto *r, u32 ack_delay_us,
			   u32 floor_us);
u32 usnic_rel_rto_current_us(const struct usnic_rel_rto *r);
bool usnic_rel_rto_timeout(struct usnic_rel_rto *r, u32 retry_limit);
void usnic_rel_rto_progress(struct usnic_rel_rto *r);
void usnic_rel_rto_not_ready(struct usnic_rel_rto *r);
void usnic_rel_rto_paired(struct usnic_rel_rto *r);

#endif /* _USNIC_REL_RTO_H */
