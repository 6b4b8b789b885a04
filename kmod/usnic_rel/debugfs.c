// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: debugfs. /sys/kernel/debug/usnic_rel/ep<N>/counters shows an
 * endpoint's counters, one "name value" a line; N is CREATE_EP's debug_id.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "usnic_rel.h"

struct dentry *usnic_rel_debugfs_root;

static const char * const usnic_rel_counter_names[USNIC_REL_NR_COUNTERS] = {
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
};

static int usnic_rel_counters_show(struct seq_file *s, void *unused)
{
	struct usnic_rel_ep *ep = s->private;
	int i;

	for (i = 0; i < USNIC_REL_NR_COUNTERS; i++)
		seq_printf(s, "%s %lld\n", usnic_rel_counter_names[i],
			   (long long)atomic64_read(&ep->counters[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(usnic_rel_counters);

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
