// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: counters and endpoints in sysfs, under the misc device:
 *
 *   counters/<name>               device totals since the module was loaded
 *   endpoints/ep<N>/counters/<name>   one endpoint's (N is its debug_id)
 *   endpoints/ep<N>/{address,pid,incarnation,mtu_cmd,mtu_data,peers}
 *
 * Each file holds one decimal value and a newline. A device total is the sum
 * over the live endpoints plus what destroyed ones had counted: an endpoint
 * adds its counters to the retired totals when it leaves the list, after its
 * socket is closed and its peers are gone, so nothing counts on it later.
 * An endpoint counts on each CPU into a set of its own; a value read is the
 * sum over the CPUs, each CPU's part read whole (u64_stats).
 *
 * An endpoint's directory is a kobject of its own, removed on destroy before
 * the endpoint's reference is dropped. Removing it waits for the reads in
 * progress and makes later reads of files held open fail, so a reader never
 * sees a freed endpoint; the kobject's memory lives until its last reference.
 */
#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "usnic_rel.h"

const char * const usnic_rel_counter_names[USNIC_REL_NR_COUNTERS] = {
	[USNIC_REL_CNT_TX_PACKETS] = "tx_packets",
	[USNIC_REL_CNT_TX_BYTES] = "tx_bytes",
	[USNIC_REL_CNT_TX_ERRORS] = "tx_errors",
	[USNIC_REL_CNT_RX_PACKETS] = "rx_packets",
	[USNIC_REL_CNT_RX_BYTES] = "rx_bytes",
	[USNIC_REL_CNT_RX_NO_BUF] = "rx_no_buf",
	[USNIC_REL_CNT_RX_BAD_HEADER] = "rx_bad_header",
	[USNIC_REL_CNT_RX_UNKNOWN_PEER] = "rx_unknown_peer",
	[USNIC_REL_CNT_RX_CQ_FULL] = "rx_cq_full",
	[USNIC_REL_CNT_RING_CORRUPT] = "ring_corrupt",
	[USNIC_REL_CNT_BAD_SQE] = "bad_sqe",
	[USNIC_REL_CNT_RX_MESSAGES] = "rx_messages",
	[USNIC_REL_CNT_RX_TOO_BIG] = "rx_too_big",
	[USNIC_REL_CNT_RX_NO_MEMORY] = "rx_no_memory",
	[USNIC_REL_CNT_RX_UNSUPPORTED] = "rx_unsupported",
	[USNIC_REL_CNT_RX_OUT_OF_ORDER] = "rx_out_of_order",
	[USNIC_REL_CNT_RX_DUPLICATE] = "rx_duplicate",
	[USNIC_REL_CNT_RX_OUT_OF_WINDOW] = "rx_out_of_window",
	[USNIC_REL_CNT_RX_STALE] = "rx_stale_incarnation",
	[USNIC_REL_CNT_RX_DEAD_PEER] = "rx_dead_peer",
	[USNIC_REL_CNT_RX_BAD_ACK] = "rx_bad_ack",
	[USNIC_REL_CNT_TX_DATA_PACKETS] = "tx_data_packets",
	[USNIC_REL_CNT_ACKS_STANDALONE] = "acks_standalone",
	[USNIC_REL_CNT_ACKS_PIGGYBACKED] = "acks_piggybacked",
	[USNIC_REL_CNT_ACKS_DELAYED] = "acks_delayed",
	[USNIC_REL_CNT_RETX_TIMEOUT] = "retx_timeout",
	[USNIC_REL_CNT_RETX_FAST] = "retx_fast",
	[USNIC_REL_CNT_PEERS_DEAD] = "peers_dead",
	[USNIC_REL_CNT_PEER_RESETS] = "peer_resets",
	[USNIC_REL_CNT_RX_UNVERIFIED] = "rx_unverified",
	[USNIC_REL_CNT_CHALLENGES_SENT] = "challenges_sent",
	[USNIC_REL_CNT_CHALLENGES_LIMITED] = "challenges_limited",
	[USNIC_REL_CNT_HELLOS_SENT] = "hellos_sent",
	[USNIC_REL_CNT_HANDSHAKES] = "handshakes_completed",
	[USNIC_REL_CNT_PEERS_STALLED] = "peers_stalled",
	[USNIC_REL_CNT_RDMA_STARTED] = "rdma_started",
	[USNIC_REL_CNT_RDMA_FAILED] = "rdma_failed",
	[USNIC_REL_CNT_RDMA_SERVED] = "rdma_served",
	[USNIC_REL_CNT_RDMA_BAD_RKEY] = "rdma_bad_rkey",
	[USNIC_REL_CNT_RDMA_LOCKED_OUT] = "rdma_locked_out",
	[USNIC_REL_CNT_RDMA_REFUSED] = "rdma_refused",
	[USNIC_REL_CNT_RDMA_BUSY] = "rdma_busy",
	[USNIC_REL_CNT_RETX_PROBE] = "retx_probe",
	[USNIC_REL_CNT_RX_HOLD_FULL] = "rx_hold_full",
	[USNIC_REL_CNT_RX_HOLD_USER_FULL] = "rx_hold_user_full",
	[USNIC_REL_CNT_TX_GSO_RUNS] = "tx_gso_runs",
	[USNIC_REL_CNT_TX_WIN_GROW] = "tx_window_grow",
	[USNIC_REL_CNT_RX_WIN_GROW] = "rx_window_grow",
	[USNIC_REL_CNT_WIN_NO_MEMORY] = "window_no_memory",
	[USNIC_REL_CNT_RX_MSG_ABORTED] = "rx_msg_aborted",
	[USNIC_REL_CNT_TX_PARKED] = "tx_parked",
	[USNIC_REL_CNT_TX_MSG_TOO_BIG] = "tx_msg_too_big",
	[USNIC_REL_CNT_TX_REFUSED_TOO_BIG] = "tx_refused_too_big",
	[USNIC_REL_CNT_CWND_FAST_RECOVERIES] = "cwnd_fast_recoveries",
	[USNIC_REL_CNT_CWND_TIMEOUTS] = "cwnd_timeouts",
	[USNIC_REL_CNT_RNR_ACKS_SENT] = "rnr_acks_sent",
	[USNIC_REL_CNT_RNR_ACKS_RECEIVED] = "rnr_acks_received",
	[USNIC_REL_CNT_RX_BAD_VERSION] = "rx_bad_version",
	[USNIC_REL_CNT_TX_LOCAL_RESENDS] = "tx_local_resends",
	[USNIC_REL_CNT_TX_GSO_FALLBACKS] = "tx_gso_fallbacks",
	[USNIC_REL_CNT_RETX_SPURIOUS] = "retx_spurious",
	[USNIC_REL_CNT_RDMA_RESP_INLINE] = "rdma_resp_inline",
	[USNIC_REL_CNT_RDMA_RESP_DEFERRED] = "rdma_resp_deferred",
	[USNIC_REL_CNT_TX_WORK_RUNS] = "tx_work_runs",
	[USNIC_REL_CNT_ACKS_INLINE] = "acks_inline",
	[USNIC_REL_CNT_TX_PACKED_MSGS] = "tx_packed_messages",
	[USNIC_REL_CNT_RDMA_QUIET_DONE] = "rdma_quiet_done",
	[USNIC_REL_CNT_RX_HELD_IN_ORDER] = "rx_held_in_order",
	[USNIC_REL_CNT_PERSIST_PROBES] = "persist_probes",
	[USNIC_REL_CNT_CWND_LOSSES_SPARED] = "cwnd_losses_spared",
};

/* Before the endpoint is published; freed with it (ep.c). */
int usnic_rel_counters_alloc(struct usnic_rel_ep *ep)
{
	int cpu;

	ep->counters = alloc_percpu_gfp(struct usnic_rel_pcpu_counters,
					GFP_KERNEL_ACCOUNT);
	if (!ep->counters)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(ep->counters, cpu)->syncp);
	return 0;
}

/* Counter @c of @ep, summed over the CPUs. */
u64 usnic_rel_counter_read(const struct usnic_rel_ep *ep, unsigned int c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct usnic_rel_pcpu_counters *pc;
		unsigned int start;
		u64 val;

		pc = per_cpu_ptr(ep->counters, cpu);
		do {
			start = u64_stats_fetch_begin(&pc->syncp);
			val = u64_stats_read(&pc->cnt[c]);
		} while (u64_stats_fetch_retry(&pc->syncp, start));
		sum += val;
	}
	return sum;
}

/* One endpoint's directory. */
struct usnic_rel_ep_sysfs {
	struct kobject kobj;
	struct usnic_rel_ep *ep;	/* valid while the directory exists */
	struct list_head node;		/* in usnic_rel_live, under the lock */
	bool added;			/* kobject_add() succeeded */
	pid_t pid;
	char address[64];
};

static DEFINE_MUTEX(usnic_rel_sysfs_lock);	/* live list and retired */
static LIST_HEAD(usnic_rel_live);
static u64 usnic_rel_retired[USNIC_REL_NR_COUNTERS];
static struct kobject *usnic_rel_counters_kobj;
static struct kobject *usnic_rel_endpoints_kobj;

static struct usnic_rel_ep_sysfs *to_ep_sysfs(struct kobject *kobj)
{
	return container_of(kobj, struct usnic_rel_ep_sysfs, kobj);
}

static u64 usnic_rel_counter_total(unsigned int i)
{
	struct usnic_rel_ep_sysfs *s;
	u64 sum;

	mutex_lock(&usnic_rel_sysfs_lock);
	sum = usnic_rel_retired[i];
	list_for_each_entry(s, &usnic_rel_live, node)
		sum += usnic_rel_counter_read(s->ep, i);
	mutex_unlock(&usnic_rel_sysfs_lock);
	return sum;
}

static struct kobj_attribute usnic_rel_counter_attrs[USNIC_REL_NR_COUNTERS];
static struct attribute *usnic_rel_counter_attr_ptrs[USNIC_REL_NR_COUNTERS + 1];

/* The same files serve the device totals and each endpoint. */
static ssize_t usnic_rel_counter_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	unsigned int i = attr - usnic_rel_counter_attrs;
	u64 val;

	if (kobj == usnic_rel_counters_kobj)
		val = usnic_rel_counter_total(i);
	else
		val = usnic_rel_counter_read(to_ep_sysfs(kobj)->ep, i);
	return sysfs_emit(buf, "%llu\n", val);
}

static const struct attribute_group usnic_rel_counters_group = {
	.attrs = usnic_rel_counter_attr_ptrs,
};

static const struct attribute_group usnic_rel_ep_counters_group = {
	.name = "counters",
	.attrs = usnic_rel_counter_attr_ptrs,
};

static ssize_t address_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", to_ep_sysfs(kobj)->address);
}

static struct kobj_attribute usnic_rel_attr_address = __ATTR_RO(address);

static ssize_t pid_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", to_ep_sysfs(kobj)->pid);
}

/*
 * Which process owns an endpoint, and the incarnation a forged packet
 * would need, are root's to read: other users see neither.
 */
static struct kobj_attribute usnic_rel_attr_pid = __ATTR(pid, 0400, pid_show, NULL);

static ssize_t incarnation_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%08x\n", to_ep_sysfs(kobj)->ep->incarnation);
}

static struct kobj_attribute usnic_rel_attr_incarnation =
	__ATTR(incarnation, 0400, incarnation_show, NULL);

static ssize_t mtu_cmd_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  to_ep_sysfs(kobj)->ep->mtu[USNIC_REL_CHAN_CMD]);
}

static struct kobj_attribute usnic_rel_attr_mtu_cmd = __ATTR_RO(mtu_cmd);

static ssize_t mtu_data_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  to_ep_sysfs(kobj)->ep->mtu[USNIC_REL_CHAN_DATA]);
}

static struct kobj_attribute usnic_rel_attr_mtu_data = __ATTR_RO(mtu_data);

static ssize_t peers_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct usnic_rel_ep *ep = to_ep_sysfs(kobj)->ep;
	struct usnic_rel_peer *peer;
	unsigned long handle;
	unsigned int n = 0;

	rcu_read_lock();
	xa_for_each(&ep->peers, handle, peer)
		n++;
	rcu_read_unlock();
	return sysfs_emit(buf, "%u\n", n);
}

static struct kobj_attribute usnic_rel_attr_peers = __ATTR_RO(peers);

static struct attribute *usnic_rel_ep_attrs[] = {
	&usnic_rel_attr_address.attr,
	&usnic_rel_attr_pid.attr,
	&usnic_rel_attr_incarnation.attr,
	&usnic_rel_attr_mtu_cmd.attr,
	&usnic_rel_attr_mtu_data.attr,
	&usnic_rel_attr_peers.attr,
	NULL,
};

static const struct attribute_group usnic_rel_ep_group = {
	.attrs = usnic_rel_ep_attrs,
};

static const struct attribute_group *usnic_rel_ep_groups[] = {
	&usnic_rel_ep_group,
	&usnic_rel_ep_counters_group,
	NULL,
};

static void usnic_rel_ep_sysfs_release(struct kobject *kobj)
{
	kfree(to_ep_sysfs(kobj));
}

static const struct kobj_type usnic_rel_ep_ktype = {
	.release = usnic_rel_ep_sysfs_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = usnic_rel_ep_groups,
};

static void usnic_rel_format_addr(char *buf, size_t size, u16 port,
				  const struct usnic_rel_addr *addr)
{
	if (addr->family == AF_INET)
		snprintf(buf, size, "%pI4:%u", addr->addr, port);
	else
		snprintf(buf, size, "[%pI6c]:%u", addr->addr, port);
}

/*
 * Called once the endpoint is bound. Without memory the endpoint works but
 * has no directory and is missing from the totals.
 */
void usnic_rel_sysfs_ep_add(struct usnic_rel_ep *ep,
			    const struct usnic_rel_addr *addr)
{
	struct usnic_rel_ep_sysfs *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return;
	s->ep = ep;
	s->pid = task_tgid_vnr(current);
	usnic_rel_format_addr(s->address, sizeof(s->address), ep->port, addr);
	kobject_init(&s->kobj, &usnic_rel_ep_ktype);
	mutex_lock(&usnic_rel_sysfs_lock);
	list_add_tail(&s->node, &usnic_rel_live);
	mutex_unlock(&usnic_rel_sysfs_lock);
	ep->sysfs = s;
	if (usnic_rel_endpoints_kobj &&
	    !kobject_add(&s->kobj, usnic_rel_endpoints_kobj, "ep%u", ep->debug_id))
		s->added = true;
}

/* On destroy, once nothing counts on @ep any more. */
void usnic_rel_sysfs_ep_remove(struct usnic_rel_ep *ep)
{
	struct usnic_rel_ep_sysfs *s = ep->sysfs;
	unsigned int i;

	if (!s)
		return;
	ep->sysfs = NULL;
	/* Waits for reads in progress; later ones fail. */
	if (s->added)
		kobject_del(&s->kobj);
	mutex_lock(&usnic_rel_sysfs_lock);
	list_del(&s->node);
	for (i = 0; i < USNIC_REL_NR_COUNTERS; i++)
		usnic_rel_retired[i] += usnic_rel_counter_read(ep, i);
	mutex_unlock(&usnic_rel_sysfs_lock);
	kobject_put(&s->kobj);
}

int usnic_rel_sysfs_init(struct device *dev)
{
	unsigned int i;
	int ret;

	for (i = 0; i < USNIC_REL_NR_COUNTERS; i++) {
		struct kobj_attribute *a = &usnic_rel_counter_attrs[i];

		/* A counter added to the enum without a name here. */
		if (WARN_ON(!usnic_rel_counter_names[i]))
			return -EINVAL;
		sysfs_attr_init(&a->attr);
		a->attr.name = usnic_rel_counter_names[i];
		a->attr.mode = 0444;
		a->show = usnic_rel_counter_show;
		usnic_rel_counter_attr_ptrs[i] = &a->attr;
	}
	usnic_rel_counters_kobj = kobject_create_and_add("counters", &dev->kobj);
	if (!usnic_rel_counters_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(usnic_rel_counters_kobj,
				 &usnic_rel_counters_group);
	if (ret)
		goto err_counters;
	usnic_rel_endpoints_kobj = kobject_create_and_add("endpoints", &dev->kobj);
	if (!usnic_rel_endpoints_kobj) {
		ret = -ENOMEM;
		goto err_counters;
	}
	return 0;

err_counters:
	kobject_put(usnic_rel_counters_kobj);
	usnic_rel_counters_kobj = NULL;
	return ret;
}

/* No endpoint is left: the module cannot unload with an open context. */
void usnic_rel_sysfs_exit(void)
{
	kobject_put(usnic_rel_endpoints_kobj);
	usnic_rel_endpoints_kobj = NULL;
	kobject_put(usnic_rel_counters_kobj);
	usnic_rel_counters_kobj = NULL;
}
