// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: module init/exit and the tunables every endpoint starts from.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>

#include "usnic_rel.h"
#include "../../include/uapi/usnic_rel.h"

/* usNIC's BTL defaults: window 4096, tiny MTU 768 B, retransmit 5 ms, ACK within 1 ms. */
unsigned int usnic_rel_max_eps_per_user = 256;
module_param_named(max_eps_per_user, usnic_rel_max_eps_per_user, uint, 0444);
MODULE_PARM_DESC(max_eps_per_user, "Endpoints one user may hold over all its files (1..65536, default 256)");

unsigned int usnic_rel_max_rx_held_kb_per_user = 262144;
module_param_named(max_rx_held_kb_per_user, usnic_rel_max_rx_held_kb_per_user, uint, 0444);
MODULE_PARM_DESC(max_rx_held_kb_per_user, "KiB of received packets one user's endpoints may hold out of order or waiting for buffers (64..4194304, default 262144)");

unsigned int usnic_rel_send_window = 4096;
module_param_named(send_window, usnic_rel_send_window, uint, 0444);
MODULE_PARM_DESC(send_window, "Packets in flight per peer and channel (power of two, 16..4096, default 4096)");

unsigned int usnic_rel_initial_cwnd = USNIC_REL_CWND_INITIAL;
module_param_named(initial_cwnd, usnic_rel_initial_cwnd, uint, 0444);
MODULE_PARM_DESC(initial_cwnd, "Congestion window a connection starts with, in packets (1..send_window, default 10)");
unsigned int usnic_rel_cwnd_min = USNIC_REL_CWND_FLOOR;
module_param_named(cwnd_min, usnic_rel_cwnd_min, uint, 0444);
MODULE_PARM_DESC(cwnd_min, "Least congestion window a loss leaves, in packets (2..send_window, default 16; 2 is RFC 5681's)");
unsigned int usnic_rel_cwnd_queue_pct = USNIC_REL_CWND_QUEUE_PCT;
module_param_named(cwnd_queue_pct, usnic_rel_cwnd_queue_pct, uint, 0444);
MODULE_PARM_DESC(cwnd_queue_pct, "A loss reduces the congestion window only if the recent RTT exceeds the least by this percent of it (0..10000, default 100; 0: every loss)");

unsigned int usnic_rel_cmd_mtu = 768;
module_param_named(cmd_mtu, usnic_rel_cmd_mtu, uint, 0444);
MODULE_PARM_DESC(cmd_mtu, "Payload bytes per command-channel packet (256..1024, default 768)");

unsigned int usnic_rel_rto_min_us = 5000;
module_param_named(rto_min_us, usnic_rel_rto_min_us, uint, 0444);
MODULE_PARM_DESC(rto_min_us, "Retransmit timeout floor in microseconds (200..1000000, default 5000)");

unsigned int usnic_rel_rto_max_us = 2000000;
module_param_named(rto_max_us, usnic_rel_rto_max_us, uint, 0444);
MODULE_PARM_DESC(rto_max_us, "Retransmit timeout ceiling in microseconds (rto_min_us..60000000, default 2000000)");

unsigned int usnic_rel_ack_delay_us = 1000;
module_param_named(ack_delay_us, usnic_rel_ack_delay_us, uint, 0444);
MODULE_PARM_DESC(ack_delay_us, "Longest delay of a coalesced ACK in microseconds (0..rto_min_us, default 1000)");

unsigned int usnic_rel_ack_every = 32;
module_param_named(ack_every, usnic_rel_ack_every, uint, 0444);
MODULE_PARM_DESC(ack_every, "Send an ACK at least every this many received packets (1..send_window/2, default 32)");

unsigned int usnic_rel_retry_limit = 12;
module_param_named(retry_limit, usnic_rel_retry_limit, uint, 0444);
MODULE_PARM_DESC(retry_limit, "Timeouts in a row before a peer is declared dead (1..64, default 12)");

unsigned int usnic_rel_stall_timeout_ms = 30000;
module_param_named(stall_timeout_ms, usnic_rel_stall_timeout_ms, uint, 0444);
MODULE_PARM_DESC(stall_timeout_ms, "Longest a packet may stay unacknowledged before its peer is declared dead, even if the peer acknowledges others (100..600000, default 30000)");

/*
 * The tail-loss probe waits at least this long: under it, the scheduling
 * of the hosts (and of a VM's vCPUs) delays an ACK more often than a
 * packet is lost.
 */
unsigned int usnic_rel_probe_min_us = 2000;
module_param_named(probe_min_us, usnic_rel_probe_min_us, uint, 0444);
MODULE_PARM_DESC(probe_min_us, "Tail-loss probe timeout floor in microseconds; the probe waits max(this, 2 SRTT + ack_delay_us + 2 RTTVAR), and never more than the RTO (0..rto_max_us, default 2000)");

/* Bounds of the timer parameters; see usnic_rel_check_params(). */
#define USNIC_REL_RTO_FLOOR_US		200U
#define USNIC_REL_RTO_CEILING_US	60000000U
#define USNIC_REL_RETRY_LIMIT_MAX	64U
#define USNIC_REL_MAX_EPS_PER_USER_MAX	65536U
#define USNIC_REL_RX_HELD_KB_MIN	64U
#define USNIC_REL_RX_HELD_KB_MAX	4194304U
#define USNIC_REL_STALL_MIN_MS		100U
#define USNIC_REL_STALL_MAX_MS		600000U

struct workqueue_struct *usnic_rel_wq;

static int __init usnic_rel_check_params(void)
{
	if (!is_power_of_2(usnic_rel_send_window) ||
	    usnic_rel_send_window < 16 || usnic_rel_send_window > 4096) {
		pr_err("send_window=%u: must be a power of two in 16..4096\n",
		       usnic_rel_send_window);
		return -EINVAL;
	}
	if (!usnic_rel_initial_cwnd ||
	    usnic_rel_initial_cwnd > usnic_rel_send_window) {
		pr_err("initial_cwnd=%u: must be in 1..send_window\n",
		       usnic_rel_initial_cwnd);
		return -EINVAL;
	}
	if (usnic_rel_cwnd_min < USNIC_REL_CWND_MIN_SSTHRESH ||
	    usnic_rel_cwnd_min > usnic_rel_send_window) {
		pr_err("cwnd_min=%u: must be in %u..send_window\n",
		       usnic_rel_cwnd_min, USNIC_REL_CWND_MIN_SSTHRESH);
		return -EINVAL;
	}
	if (usnic_rel_cwnd_queue_pct > USNIC_REL_CWND_QUEUE_PCT_MAX) {
		pr_err("cwnd_queue_pct=%u: must be in 0..%u\n",
		       usnic_rel_cwnd_queue_pct, USNIC_REL_CWND_QUEUE_PCT_MAX);
		return -EINVAL;
	}
	if (usnic_rel_cmd_mtu < 256 || usnic_rel_cmd_mtu > 1024) {
		pr_err("cmd_mtu=%u: must be in 256..1024\n", usnic_rel_cmd_mtu);
		return -EINVAL;
	}
	/*
	 * The timers are hrtimers armed from these: an RTO below
	 * 200 us resends faster than any real path answers, and above a
	 * minute a dead peer holds its sends for hours.
	 */
	if (usnic_rel_rto_min_us < USNIC_REL_RTO_FLOOR_US ||
	    usnic_rel_rto_max_us > USNIC_REL_RTO_CEILING_US ||
	    usnic_rel_rto_min_us > usnic_rel_rto_max_us) {
		pr_err("rto_min_us=%u rto_max_us=%u: need %u <= min <= max <= %u\n",
		       usnic_rel_rto_min_us, usnic_rel_rto_max_us,
		       USNIC_REL_RTO_FLOOR_US, USNIC_REL_RTO_CEILING_US);
		return -EINVAL;
	}
	if (usnic_rel_probe_min_us > usnic_rel_rto_max_us) {
		pr_err("probe_min_us=%u: must be at most rto_max_us (%u)\n",
		       usnic_rel_probe_min_us, usnic_rel_rto_max_us);
		return -EINVAL;
	}
	/* An ACK held past the sender's RTO makes it resend what arrived. */
	if (usnic_rel_ack_delay_us > usnic_rel_rto_min_us) {
		pr_err("ack_delay_us=%u: must be at most rto_min_us (%u)\n",
		       usnic_rel_ack_delay_us, usnic_rel_rto_min_us);
		return -EINVAL;
	}
	if (!usnic_rel_ack_every || usnic_rel_ack_every > usnic_rel_send_window / 2) {
		pr_err("ack_every=%u: must be in 1..send_window/2\n",
		       usnic_rel_ack_every);
		return -EINVAL;
	}
	if (!usnic_rel_max_eps_per_user ||
	    usnic_rel_max_eps_per_user > USNIC_REL_MAX_EPS_PER_USER_MAX) {
		pr_err("max_eps_per_user=%u: must be in 1..%u\n",
		       usnic_rel_max_eps_per_user, USNIC_REL_MAX_EPS_PER_USER_MAX);
		return -EINVAL;
	}
	if (usnic_rel_max_rx_held_kb_per_user < USNIC_REL_RX_HELD_KB_MIN ||
	    usnic_rel_max_rx_held_kb_per_user > USNIC_REL_RX_HELD_KB_MAX) {
		pr_err("max_rx_held_kb_per_user=%u: must be in %u..%u\n",
		       usnic_rel_max_rx_held_kb_per_user, USNIC_REL_RX_HELD_KB_MIN,
		       USNIC_REL_RX_HELD_KB_MAX);
		return -EINVAL;
	}
	if (!usnic_rel_retry_limit ||
	    usnic_rel_retry_limit > USNIC_REL_RETRY_LIMIT_MAX) {
		pr_err("retry_limit=%u: must be in 1..%u\n",
		       usnic_rel_retry_limit, USNIC_REL_RETRY_LIMIT_MAX);
		return -EINVAL;
	}
	/* Checked on retransmit timeouts, so it must outlast a few RTOs. */
	if (usnic_rel_stall_timeout_ms < USNIC_REL_STALL_MIN_MS ||
	    usnic_rel_stall_timeout_ms > USNIC_REL_STALL_MAX_MS) {
		pr_err("stall_timeout_ms=%u: must be in %u..%u\n",
		       usnic_rel_stall_timeout_ms, USNIC_REL_STALL_MIN_MS,
		       USNIC_REL_STALL_MAX_MS);
		return -EINVAL;
	}
	return 0;
}

static int __init usnic_rel_init(void)
{
	int ret;

	ret = usnic_rel_check_params();
	if (ret)
		return ret;

	ret = usnic_rel_peer_cache_init();
	if (ret)
		return ret;
	usnic_rel_wq = alloc_workqueue(KBUILD_MODNAME, WQ_UNBOUND, 0);
	if (!usnic_rel_wq) {
		usnic_rel_peer_cache_exit();
		return -ENOMEM;
	}
	usnic_rel_debugfs_init();
	ret = usnic_rel_chardev_init();
	if (ret) {
		usnic_rel_debugfs_exit();
		destroy_workqueue(usnic_rel_wq);
		usnic_rel_peer_cache_exit();
		return ret;
	}
	pr_info("loaded, ABI version %u\n", USNIC_REL_ABI_VERSION);
	return 0;
}

static void __exit usnic_rel_exit(void)
{
	usnic_rel_chardev_exit();
	usnic_rel_debugfs_exit();
	/* Removed peers wait for a grace period before their work is queued. */
	rcu_barrier();
	/* Drains registrations whose last user was the receive path. */
	destroy_workqueue(usnic_rel_wq);
	usnic_rel_peer_cache_exit();
}

module_init(usnic_rel_init);
module_exit(usnic_rel_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("usnic_rel developers");
MODULE_DESCRIPTION("Reliable datagrams and emulated RDMA over UDP for HPC messaging");
MODULE_VERSION("0.1");
