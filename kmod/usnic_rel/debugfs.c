// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: debugfs. /sys/kernel/debug/usnic_rel/ep<N>/counters shows an
 * endpoint's counters, one "name value" a line; N is CREATE_EP's debug_id.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "usnic_rel.h"

struct dentry *usnic_rel_debugfs_root;

static int usnic_rel_counters_show(struct seq_file *s, void *unused)
{
	struct usnic_rel_ep *ep = s->private;
	int i;

	for (i = 0; i < USNIC_REL_NR_COUNTERS; i++)
		seq_printf(s, "%s %llu\n", usnic_rel_counter_names[i],
			   usnic_rel_counter_read(ep, i));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(usnic_rel_counters);

static const char * const usnic_rel_conn_state_names[] = {
	[USNIC_REL_CONN_ACTIVE] = "active",
	[USNIC_REL_CONN_DEAD] = "dead",
	[USNIC_REL_CONN_REMOVED] = "removed",
};

/* Where the handshake of @conn stands; see usnic_rel(4). */
static const char *usnic_rel_hs_state(const struct usnic_rel_conn *conn)
{
	switch (conn->state) {
	case USNIC_REL_CONN_REMOVED:
		return "removed";
	case USNIC_REL_CONN_DEAD:
		return conn->hs_stats.stalled ? "stalled" : "dead";
	default:
		break;
	}
	if (conn->remote_incarnation)
		return "paired";
	return conn->hs_stats.hello_sent ? "hello_sent" : "idle";
}

/*
 * Why a peer does not talk: the handshake's state and what each side sent.
 * The cookie, the proof a peer must echo, is never shown.
 */
static void usnic_rel_peer_hs_show(struct seq_file *s,
				   const struct usnic_rel_conn *conn)
{
	long long last_rx_ms = -1;

	if (conn->hs_stats.last_rx)
		last_rx_ms = jiffies_to_msecs(jiffies - conn->hs_stats.last_rx);
	seq_printf(s, "  handshake %s local_incarnation %08x prev_incarnation %08x peer_rx_limit %u hellos_sent %u hellos_received %u unverified %u pairings %u last_rx_ms %lld\n",
		   usnic_rel_hs_state(conn), conn->local_incarnation,
		   conn->prev_incarnation, conn->peer_rx_limit,
		   conn->hs_stats.hellos_sent, conn->hs_stats.hellos_rx,
		   conn->hs_stats.unverified_rx, conn->hs_stats.pairings,
		   last_rx_ms);
}

static void usnic_rel_peer_show(struct seq_file *s, struct usnic_rel_peer *peer)
{
	struct usnic_rel_conn *conn = &peer->conn;
	int i;

	spin_lock_bh(&conn->lock);
	seq_printf(s, "peer %u %pISpc %s incarnation %08x srtt_us %u rttvar_us %u rto_us %u backoff %u retries %u\n",
		   peer->handle, &peer->addr, usnic_rel_conn_state_names[conn->state],
		   conn->remote_incarnation, conn->rto.srtt_us,
		   conn->rto.rttvar_us, usnic_rel_rto_current_us(&conn->rto),
		   conn->rto.backoff, conn->rto.retries);
	usnic_rel_peer_hs_show(s, conn);
	for (i = 0; i < USNIC_REL_NR_CHANS; i++) {
		struct usnic_rel_chan_conn *c = &conn->chan[i];

		/*
		 * cc state: 0 open, 1 fast recovery, 2 slow start after a
		 * timeout; peer_rnr: the peer said it dropped for want of buffers;
		 * reo_wnd_us: reordering tolerated by time-based loss detection,
		 * widened by spurious resends
		 */
		seq_printf(s, "  chan %d tx una %u next %u unacked %u sacked %u dup_acks %u recovery %d retx_timeout %llu retx_fast %llu slots %u rx next %u held %u slots %u backlog %u ack_pending %d cc cwnd %u ssthresh %u pipe %u lost %u state %d fast_recoveries %llu timeouts %llu spared %llu rtt_us %llu min_rtt_us %llu peer_rnr %d reo_wnd_us %llu spurious %llu\n",
			   i, c->tx.una, c->tx.next,
			   usnic_rel_txwin_inflight(&c->tx), c->tx.nr_sacked,
			   c->tx.dup_acks, c->tx.in_recovery, c->retx_timeout,
			   c->retx_fast, c->tx.cap, c->rx.next, c->rx.nr_ooo,
			   c->rx.cap, skb_queue_len(&c->backlog), c->ack_pending,
			   c->tx.cc.cwnd, c->tx.cc.ssthresh,
			   usnic_rel_txwin_pipe(&c->tx), c->tx.nr_lost,
			   c->tx.cc.state, c->tx.cc.fast_episodes,
			   c->tx.cc.rto_episodes, c->tx.cc.losses_spared,
			   div_u64(c->tx.cc.rtt_ns, NSEC_PER_USEC),
			   div_u64(c->tx.cc.min_rtt_ns, NSEC_PER_USEC),
			   c->tx.cc.peer_rnr,
			   div_u64(usnic_rel_txwin_reo_wnd(&c->tx), NSEC_PER_USEC),
			   c->tx.spurious);
	}
	spin_unlock_bh(&conn->lock);
}

/* Per-peer connection state: windows, RTT estimate, retransmit backoff. */
static int usnic_rel_peers_show(struct seq_file *s, void *unused)
{
	struct usnic_rel_ep *ep = s->private;
	struct usnic_rel_peer *peer;
	unsigned long handle;

	/* A removed peer is freed only after a grace period. */
	rcu_read_lock();
	xa_for_each(&ep->peers, handle, peer)
		usnic_rel_peer_show(s, peer);
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(usnic_rel_peers);

/*
 * What the address vector and the windows cost: peers, the kernel structure
 * of each, the slot arrays of all windows and how many peers have any, and
 * the packet copies kept for retransmission (none once all sends completed).
 */
static int usnic_rel_memory_show(struct seq_file *s, void *unused)
{
	struct usnic_rel_ep *ep = s->private;
	struct usnic_rel_peer *peer;
	unsigned long handle, peers = 0, active = 0;
	int i;

	rcu_read_lock();
	xa_for_each(&ep->peers, handle, peer) {
		peers++;
		for (i = 0; i < USNIC_REL_NR_CHANS; i++)
			if (READ_ONCE(peer->conn.chan[i].tx.cap) ||
			    READ_ONCE(peer->conn.chan[i].rx.cap)) {
				active++;
				break;
			}
	}
	rcu_read_unlock();
	seq_printf(s, "peers %lu\npeer_struct_bytes %zu\npeers_with_window_slots %lu\nwindow_bytes %ld\ntx_slots_max %d\nrx_slots_max %d\nwindow_shrinks %lld\ntx_buffers %ld\ntx_buffer_bytes %ld\n",
		   peers, sizeof(struct usnic_rel_peer), active,
		   atomic_long_read(&ep->win_bytes),
		   atomic_read(&ep->win_tx_slots_max),
		   atomic_read(&ep->win_rx_slots_max),
		   (long long)atomic64_read(&ep->win_shrinks),
		   atomic_long_read(&ep->tx_bufs),
		   atomic_long_read(&ep->tx_buf_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(usnic_rel_memory);

/*
 * The files are removed before the endpoint's reference is dropped, and
 * debugfs_remove() waits for readers, so a reader never sees a freed ep.
 */
void usnic_rel_debugfs_ep_add(struct usnic_rel_ep *ep)
{
	char name[16];

	snprintf(name, sizeof(name), "ep%u", ep->debug_id);
	ep->debugfs = debugfs_create_dir(name, usnic_rel_debugfs_root);
	debugfs_create_file("counters", 0444, ep->debugfs, ep,
			    &usnic_rel_counters_fops);
	debugfs_create_file("peers", 0444, ep->debugfs, ep,
			    &usnic_rel_peers_fops);
	debugfs_create_file("memory", 0444, ep->debugfs, ep,
			    &usnic_rel_memory_fops);
	usnic_rel_fault_debugfs_add(ep);
}

void usnic_rel_debugfs_ep_remove(struct usnic_rel_ep *ep)
{
	debugfs_remove(ep->debugfs);
	ep->debugfs = NULL;
}

void usnic_rel_debugfs_init(void)
{
	/* debugfs failures are not fatal: the transport works without it. */
	usnic_rel_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
}

void usnic_rel_debugfs_exit(void)
{
	debugfs_remove_recursive(usnic_rel_debugfs_root);
	usnic_rel_debugfs_root = NULL;
}
