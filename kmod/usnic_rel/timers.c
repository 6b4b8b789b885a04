// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the timers of a connection. One retransmit timer per peer (not
 * per packet) first probes the tail of a flight, then runs the RTO with
 * backoff and declares the peer dead after retry_limit timeouts in a row,
 * or when a packet stayed unacknowledged for stall_timeout_ms even though
 * the peer acknowledged others (a peer that answers one packet per RTO);
 * before the connection is paired it resends the HELLO instead of data,
 * and after it, until the peer shows that it paired too, the HELLO that
 * answered the peer's challenge with the data. The reorder timer calls
 * packets lost by time (RACK) when no ACK comes to do it. One hrtimer bounds
 * how long an ACK may be held back for coalescing, and sends the ACK itself
 * from its softirq when it can (usnic_rel_ack_take_inline()). Otherwise the
 * timers only decide: the resends and probes they ask for happen in the
 * connection's work item, in process context.
 *
 * The retransmit and delayed-ACK timers are lazy: a reason that goes away
 * (the flight acknowledged, the ACK carried by a data packet) does not
 * cancel its timer, and a new reason due later than the queued expiry does
 * not move it; the expiry finds the reason gone and does nothing, or due
 * later and moves itself there. Starting or cancelling a CPU's earliest
 * timer reprograms its clock event device (a VM exit under a hypervisor),
 * and a ping-pong paid that four times per round trip on each side; now
 * about once per timeout period.
 *
 * All are soft hrtimers on CLOCK_MONOTONIC, exact to the microsecond (a
 * jiffies timer of 1 ms fires anywhere in 0..4 ms at HZ=250, often before
 * the ACK it waits for). Their callbacks run in the HRTIMER softirq, which
 * a softirq pass runs after NET_RX: ACKs already received on this CPU are
 * taken before the timer they answer. The callbacks take conn->lock with
 * spin_lock (softirq already) and never sleep; a lazy expiry whose reason
 * is gone returns before taking it.
 */
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/mutex.h>

#include <kunit/visibility.h>

#include "conn.h"
#include "usnic_rel.h"
#include "wire.h"

/* Slack of the reorder timer: a tenth of a fast LAN's round trip. */
#define USNIC_REL_REO_SLACK_NS	(10 * NSEC_PER_USEC)
/*
 * Persist probes to a peer that holds all we sent, in a row and unanswered
 * (each one RTO, backed off, after the last), before what it held goes
 * again: it may have restarted, and its new life ignores probes too short
 * to draw a challenge. Two, so that one answer late by an RTO (a busy vCPU)
 * costs no resend.
 */
#define USNIC_REL_PERSIST_TRIES	2

static bool usnic_rel_conn_in_flight(const struct usnic_rel_conn *conn)
{
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (usnic_rel_txwin_inflight(&conn->chan[i].tx))
			return true;
	return false;
}

/*
 * The work item sends from the CPU where the process rings its doorbell,
 * not from wherever the ACK or the timer that kicked it ran: packets that
 * leave from two CPUs go through two transmit queues (two backlogs on a
 * veth) and overtake each other, which the peer reports as holes. It runs
 * at normal priority: a high-priority worker that transmits a window
 * starves ksoftirqd on its CPU, which must drain what it sent (on a veth,
 * the receive side of the same packets), and the packets it holds back
 * come late enough to be resent.
 */
void usnic_rel_tx_work_kick(struct usnic_rel_peer *peer)
{
	int cpu = READ_ONCE(peer->ep->tx_cpu);

	if (peer->conn.state == USNIC_REL_CONN_REMOVED)
		return;
	if (cpu >= 0 && cpu_online(cpu))
		queue_work_on(cpu, system_wq, &peer->conn.tx_work);
	else
		queue_work(system_wq, &peer->conn.tx_work);
}

/*
 * Have @t expire at @due_ns (CLOCK_MONOTONIC), @slack_ns late at most,
 * unless it is already queued to expire earlier: then its expiry finds the
 * reason due later and comes back here.
 */
static void usnic_rel_timer_due(struct hrtimer *t, u64 due_ns, u64 slack_ns)
{
	if (hrtimer_is_queued(t) && hrtimer_get_softexpires_tv64(t) <= due_ns)
		return;
	hrtimer_start_range_ns(t, ns_to_ktime(due_ns), slack_ns,
			       HRTIMER_MODE_ABS_SOFT);
}

/*
 * Give lazy timer @t a reason due at @due_ns, stored in *@reason. The full
 * barrier pairs with the one in usnic_rel_timer_reason_gone(): either this
 * sees the expiry under way (@t no longer queued) and starts @t again, or
 * that expiry sees the new reason and takes the lock. Caller holds
 * conn->lock.
 */
static void usnic_rel_timer_reason_set(struct hrtimer *t, u64 *reason,
				       u64 due_ns, u64 slack_ns)
{
	WRITE_ONCE(*reason, due_ns);
	/* Store the reason before looking whether the timer is queued. */
	smp_mb();
	usnic_rel_timer_due(t, due_ns, slack_ns);
}

/*
 * An expiry of a lazy timer whose reason went away (*@reason 0: the flight
 * acknowledged, the ACK carried by data) returns without conn->lock, which
 * the sender holding it would make it wait for: in a ping-pong most
 * expiries are such.
 */
static bool usnic_rel_timer_reason_gone(const u64 *reason)
{
	/* The hrtimer core dequeued @t before calling us: then read. */
	smp_mb();
	return !READ_ONCE(*reason);
}

/*
 * An expiry of a lazy timer: is its reason, due at @due_ns (0: none), due
 * now? If it is due later, the timer moves there. Caller holds conn->lock
 * and has checked that nobody requeued @t meanwhile.
 */
static bool usnic_rel_timer_reason_due(struct hrtimer *t, u64 due_ns)
{
	u64 now;

	if (!due_ns)
		return false;
	now = ktime_get_ns();
	if (now >= due_ns)
		return true;
	/* A little late costs little; the slack lets expiries batch. */
	usnic_rel_timer_due(t, due_ns, (due_ns - now) / 8);
	return false;
}

/*
 * Arm the retransmit timer: first as a tail-loss probe, once per flight,
 * then for the current RTO, allowing an eighth more (a late timer costs a
 * little recovery time). Without @restart a pending timer is left alone,
 * so that a stream of new packets cannot postpone the retransmission of an
 * old one forever. Caller holds conn->lock.
 */
void usnic_rel_rtx_timer_arm(struct usnic_rel_peer *peer, bool restart)
{
	struct usnic_rel_conn *conn = &peer->conn;
	u64 ns;
	u32 us = 0;

	if (conn->state != USNIC_REL_CONN_ACTIVE)
		return;
	if (!usnic_rel_conn_in_flight(conn)) {
		WRITE_ONCE(conn->rtx_due_ns, 0);
		return;
	}
	if (!restart && conn->rtx_due_ns)
		return;
	if (!conn->probe_sent && conn->remote_incarnation)
		us = usnic_rel_rto_probe_us(&conn->rto, usnic_rel_ack_delay_us,
					    usnic_rel_probe_min_us);
	conn->probe_armed = us != 0;
	if (!us)
		us = usnic_rel_rto_current_us(&conn->rto);
	ns = (u64)us * NSEC_PER_USEC;
	usnic_rel_timer_reason_set(&conn->rtx_timer, &conn->rtx_due_ns,
				   ktime_get_ns() + ns, ns / 8);
}

/**
 * usnic_rel_probe_wait() - put the tail-loss probe off behind a transmission?
 * @conn: the connection whose probe timer expired
 * @transmitting: the endpoint is sending now (its tx_lock is held)
 *
 * The probe's time runs from when the flight's packets were numbered, and
 * a sender preempted between numbering a batch and sending it lets it run
 * out before they leave (5 ms and more in a loaded VM); the work item that
 * would send the probe waits for the same transmission, after which the
 * probe duplicates what just left. Once per flight the probe then starts
 * over from now; after that it goes whatever the endpoint does, so that a
 * sender that transmits all the time cannot put it off for good.
 *
 * Return: true when the caller must rearm the probe instead of sending it.
 */
bool usnic_rel_probe_wait(struct usnic_rel_conn *conn, bool transmitting)
{
	if (!transmitting || conn->probe_waited)
		return false;
	conn->probe_waited = true;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(usnic_rel_probe_wait);

/*
 * The peer holds the oldest packet of @c for want of buffers (F_HELD): it
 * was received, so instead of resending anything ask the peer for an ACK
 * (a pure ACK with F_ACK_REQ, as TCP probes a zero window). Its answer says
 * whether it still holds it (then rto_not_ready() keeps the retry count at
 * zero), or acknowledges it, if the ACK after the delivery was lost; no
 * answer is a timeout like any other, so a dead peer is still found out.
 * Caller holds conn->lock and kicks the work item. Returns whether so.
 */
static bool usnic_rel_persist(struct usnic_rel_chan_conn *c)
{
	if (!usnic_rel_txwin_una_held(&c->tx))
		return false;
	c->persist_owed = true;
	c->ack_pending = true;
	return true;
}

/*
 * The probe timer fired: the last packets of a flight, or their ACKs, may
 * be lost, and nothing sent after them will tell. Resend the newest one:
 * its ACK (with SACK) tells what is missing, so recovery runs on ACKs
 * rather than waiting out the RTO. A channel whose peer holds all it sent
 * is probed for an ACK instead. Caller holds conn->lock.
 */
static void usnic_rel_probe(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	int i;

	conn->probe_armed = false;
	conn->probe_sent = true;
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (usnic_rel_txwin_inflight(&conn->chan[i].tx) &&
		    !(usnic_rel_persist(&conn->chan[i]) &&
		      usnic_rel_txwin_all_held(&conn->chan[i].tx)))
			conn->chan[i].retx_probe = true;
	usnic_rel_rtx_timer_arm(peer, true);
	usnic_rel_tx_work_kick(peer);
}

/*
 * Is a channel other than @chan still waiting, a whole RTO after its oldest
 * packet last went out? The connection's one timer serves both channels:
 * progress on @chan must not push it back then, or a tail lost on the
 * other channel would never be probed nor timed out for as long as @chan
 * keeps making progress. Caller holds conn->lock.
 */
bool usnic_rel_conn_other_overdue(const struct usnic_rel_conn *conn,
				  unsigned int chan)
{
	u64 rto_ns = (u64)usnic_rel_rto_current_us(&conn->rto) * NSEC_PER_USEC;
	u64 now = ktime_get_ns();
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (i != chan &&
		    usnic_rel_txwin_overdue(&conn->chan[i].tx, now, rto_ns))
			return true;
	return false;
}

/*
 * Has a packet waited for its acknowledgment past stall_timeout_ms? Not
 * while the peer says it has no buffers for it (F_RNR): a rank computing
 * without posting receives is slow, and retry_limit still catches a peer
 * that stops answering.
 */
static bool usnic_rel_conn_stalled(const struct usnic_rel_conn *conn)
{
	u64 limit = (u64)usnic_rel_stall_timeout_ms * NSEC_PER_MSEC;
	u64 now = ktime_get_ns();
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		const struct usnic_rel_txwin *w = &conn->chan[i].tx;

		if (usnic_rel_txwin_inflight(w) && !w->cc.peer_rnr &&
		    now - usnic_rel_txwin_oldest_ns(w) > limit)
			return true;
	}
	return false;
}

/*
 * The channels the expiring RTO concerns: those whose oldest packet waited
 * it out (usnic_rel_txwin_timed_out()). Caller holds conn->lock.
 */
static unsigned long usnic_rel_conn_timed_out(const struct usnic_rel_conn *conn,
					      u64 now)
{
	const struct usnic_rel_txwin *w[USNIC_REL_NR_CHANS];
	u64 rto_ns = (u64)usnic_rel_rto_current_us(&conn->rto) * NSEC_PER_USEC;
	int i;

	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		w[i] = &conn->chan[i].tx;
	return usnic_rel_txwin_timed_out(w, USNIC_REL_NR_CHANS, now, rto_ns);
}

static enum hrtimer_restart usnic_rel_rtx_timeout(struct hrtimer *t)
{
	struct usnic_rel_peer *peer = container_of(t, struct usnic_rel_peer,
						   conn.rtx_timer);
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_ep *ep = peer->ep;
	unsigned long chans;
	u64 now, recent;
	int i;

	if (usnic_rel_timer_reason_gone(&conn->rtx_due_ns))
		return HRTIMER_NORESTART;
	spin_lock(&conn->lock);
	/*
	 * Rearmed while this expiry waited for the lock (an ACK's progress):
	 * the new expiry replaces this one.
	 */
	if (hrtimer_is_queued(t) ||
	    !usnic_rel_timer_reason_due(t, conn->rtx_due_ns))
		goto out;
	/* Whatever runs below arms it again if it must. */
	WRITE_ONCE(conn->rtx_due_ns, 0);
	if (conn->state != USNIC_REL_CONN_ACTIVE ||
	    !usnic_rel_conn_in_flight(conn))
		goto out;
	/* Before the pairing nothing left: the HELLO's retries decide. */
	if (conn->remote_incarnation && usnic_rel_conn_stalled(conn)) {
		usnic_rel_conn_dead(ep, peer, true);
		goto out;
	}
	if (!conn->remote_incarnation) {
		/* Nothing is sent before the pairing: ask for it again. */
		if (usnic_rel_rto_timeout(&conn->rto, usnic_rel_retry_limit)) {
			usnic_rel_conn_dead(ep, peer, false);
			goto out;
		}
		conn->hs_owed = true;
		usnic_rel_rtx_timer_arm(peer, true);
		usnic_rel_tx_work_kick(peer);
		goto out;
	}
	if (conn->probe_armed) {
		/* A hint: a transmission may start or end meanwhile. */
		if (usnic_rel_probe_wait(conn, mutex_is_locked(&ep->tx_lock))) {
			usnic_rel_rtx_timer_arm(peer, true);
			goto out;
		}
		usnic_rel_probe(peer);
		goto proof;
	}
	/*
	 * Packets the host itself could not send wait to be resent: no news
	 * about the network, so no timeout (the stall check above still ends
	 * a peer the host can never send to).
	 */
	if (usnic_rel_conn_local_lost(conn)) {
		usnic_rel_rtx_timer_arm(peer, true);
		usnic_rel_tx_work_kick(peer);
		goto proof;
	}
	/* The timeout that expired, before the backoff doubles it. */
	now = ktime_get_ns();
	chans = usnic_rel_conn_timed_out(conn, now);
	if (usnic_rel_rto_timeout(&conn->rto, usnic_rel_retry_limit)) {
		usnic_rel_conn_dead(ep, peer, false);
		goto out;
	}
	/* This flight is past probing: the backed-off RTO runs until an ACK. */
	conn->probe_sent = true;
	/*
	 * Resend what had the time to be acknowledged and was not: a packet
	 * sent less than a round trip ago may well be on its way. At most half
	 * the RTO: an SRTT above the RTO ceiling must not hold back every
	 * packet at every timeout.
	 */
	recent = 0;
	if (conn->rto.has_sample)
		recent = (u64)min(conn->rto.srtt_us,
				  usnic_rel_rto_current_us(&conn->rto) / 2) *
			 NSEC_PER_USEC;
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		if (!(chans & BIT(i)))
			continue;
		/*
		 * Nothing was lost: the peer holds it all. Probed too often
		 * in vain, what it held goes again, as after any timeout.
		 */
		if (usnic_rel_persist(c) && usnic_rel_txwin_all_held(&c->tx)) {
			if (conn->rto.retries <= USNIC_REL_PERSIST_TRIES)
				continue;
			usnic_rel_txwin_unhold(&c->tx);
		}
		if (usnic_rel_txwin_timeout(&c->tx))
			usnic_rel_count(ep, USNIC_REL_CNT_CWND_FAST_RECOVERIES, 1);
		c->retx_all = true;
		c->retx_sent_before = now > recent ? now - recent : 0;
	}
	usnic_rel_rtx_timer_arm(peer, true);
	usnic_rel_tx_work_kick(peer);
proof:
	/* Our proof may have been lost: it goes with what the work resends. */
	if (conn->hs_unconfirmed)
		conn->hs_owed = true;
out:
	spin_unlock(&conn->lock);
	/* Any rearming above went through hrtimer_start. */
	return HRTIMER_NORESTART;
}

/*
 * Arm the reorder timer for the earliest time a packet of either channel
 * becomes lost by time, or stop it when none may. It waits ack_delay_us
 * longer: the ACK that shows the late packet arrived may leave the peer
 * that much later than the one that made it a candidate (a delayed ACK, or
 * the peer's work item scheduled late), and an ACK that comes meanwhile
 * decides without it. Caller holds conn->lock.
 */
void usnic_rel_reo_timer_arm(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	u64 due = 0, d;
	int i;

	if (conn->state != USNIC_REL_CONN_ACTIVE)
		return;
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		const struct usnic_rel_txwin *w = &conn->chan[i].tx;

		/* Not ready: resent at the RTO's pace, which its answers set. */
		d = w->cc.peer_rnr ? 0 : w->reo_deadline_ns;
		if (d && (!due || d < due))
			due = d;
	}
	if (!due) {
		hrtimer_try_to_cancel(&conn->reo_timer);
		return;
	}
	due += (u64)usnic_rel_ack_delay_us * NSEC_PER_USEC;
	/* A little late costs little; the slack lets expiries batch. */
	hrtimer_start_range_ns(&conn->reo_timer, ns_to_ktime(due),
			       USNIC_REL_REO_SLACK_NS, HRTIMER_MODE_ABS_SOFT);
}

/*
 * The reorder timer fired: what an ACK arriving now would find lost by
 * time is resent, as a fast retransmit, without waiting for the probe or
 * the RTO.
 */
static enum hrtimer_restart usnic_rel_reo_timeout(struct hrtimer *t)
{
	struct usnic_rel_peer *peer = container_of(t, struct usnic_rel_peer,
						   conn.reo_timer);
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_ack_result res;
	bool kick = false;
	u64 now;
	int i;

	spin_lock(&conn->lock);
	if (hrtimer_is_queued(t) || conn->state != USNIC_REL_CONN_ACTIVE ||
	    !conn->remote_incarnation)
		goto out;
	now = ktime_get_ns();
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		if (!c->tx.reo_deadline_ns || c->tx.cc.peer_rnr)
			continue;
		usnic_rel_txwin_reo_timeout(&c->tx, now, &res);
		if (res.recovery_started)
			usnic_rel_count(peer->ep,
					USNIC_REL_CNT_CWND_FAST_RECOVERIES, 1);
		if (res.fast_retransmit)
			c->retx_pending = true;
		if (res.rack_lost)
			kick = true;
	}
	usnic_rel_reo_timer_arm(peer);
	if (kick)
		usnic_rel_tx_work_kick(peer);
out:
	spin_unlock(&conn->lock);
	return HRTIMER_NORESTART;
}

/*
 * The delayed ACK is due: sent from this softirq as the receive path sends
 * those owed at once, through the endpoint's socket while it has one.
 */
static enum hrtimer_restart usnic_rel_ack_timeout(struct hrtimer *t)
{
	struct usnic_rel_peer *peer = container_of(t, struct usnic_rel_peer,
						   conn.ack_timer);
	struct usnic_rel_conn *conn = &peer->conn;
	struct usnic_rel_ep *ep = peer->ep;
	unsigned long chans = 0;
	u8 ack[USNIC_REL_ACK_MAX_LEN];
	unsigned int i, chan = 0;
	struct sock *sk;
	size_t len;

	if (usnic_rel_timer_reason_gone(&conn->ack_due_ns))
		return HRTIMER_NORESTART;
	rcu_read_lock();
	sk = rcu_dereference(ep->sk_rcu);
	spin_lock(&conn->lock);
	/* Requeued meanwhile, nothing owed (carried by data), or not yet. */
	if (hrtimer_is_queued(t) ||
	    !usnic_rel_timer_reason_due(t, conn->ack_due_ns)) {
		spin_unlock(&conn->lock);
		rcu_read_unlock();
		return HRTIMER_NORESTART;
	}
	/* The next ACK owed arms it again, whatever happens to this one. */
	WRITE_ONCE(conn->ack_due_ns, 0);
	usnic_rel_count(ep, USNIC_REL_CNT_ACKS_DELAYED, 1);
	for (i = 0; i < USNIC_REL_NR_CHANS; i++)
		if (conn->chan[i].ack_pending)
			chans |= BIT(i);
	if (sk) {
		len = usnic_rel_ack_take_inline(ep, peer, chans, ack,
						sizeof(ack), &chan);
	} else {
		len = 0;
		usnic_rel_tx_work_kick(peer);
	}
	spin_unlock(&conn->lock);
	if (len)
		usnic_rel_ack_xmit_softirq(ep, sk, peer, chan, ack, len);
	rcu_read_unlock();
	return HRTIMER_NORESTART;
}

/*
 * An ACK is owed on @chan: send it now, or let the delayed-ACK timer gather
 * more packets first (or reverse traffic carry it). Caller holds conn->lock.
 */
void usnic_rel_ack_schedule(struct usnic_rel_peer *peer, unsigned int chan,
			    bool now)
{
	struct usnic_rel_conn *conn = &peer->conn;

	conn->chan[chan].ack_pending = true;
	if (now) {
		if (conn->ack_kick_held)
			conn->ack_kick_owed |= BIT(chan);
		else
			usnic_rel_tx_work_kick(peer);
		return;
	}
	/* Due ack_delay_us after the first packet it acknowledges. */
	if (conn->state != USNIC_REL_CONN_REMOVED && !conn->ack_due_ns)
		usnic_rel_timer_reason_set(&conn->ack_timer, &conn->ack_due_ns,
					   ktime_get_ns() +
					   (u64)usnic_rel_ack_delay_us *
					   NSEC_PER_USEC, 0);
}

static void usnic_rel_tx_work(struct work_struct *work)
{
	struct usnic_rel_peer *peer = container_of(work, struct usnic_rel_peer,
						   conn.tx_work);

	usnic_rel_count(peer->ep, USNIC_REL_CNT_TX_WORK_RUNS, 1);
	usnic_rel_conn_flush(peer->ep, peer);
}

void usnic_rel_timers_init(struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;

	hrtimer_init(&conn->rtx_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	conn->rtx_timer.function = usnic_rel_rtx_timeout;
	hrtimer_init(&conn->reo_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	conn->reo_timer.function = usnic_rel_reo_timeout;
	hrtimer_init(&conn->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	conn->ack_timer.function = usnic_rel_ack_timeout;
	INIT_WORK(&conn->tx_work, usnic_rel_tx_work);
}
