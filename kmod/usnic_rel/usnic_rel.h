/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel internal declarations shared by the module's files.
 */
#ifndef _USNIC_REL_H
#define _USNIC_REL_H

#include <linux/types.h>
#include <linux/dcache.h>

/* Module parameters (main.c); validated once at load time. */
extern unsigned int usnic_rel_send_window;
extern unsigned int usnic_rel_cmd_mtu;
extern unsigned int usnic_rel_rto_min_us;
extern unsigned int usnic_rel_rto_max_us;
extern unsigned int usnic_rel_ack_delay_us;
extern unsigned int usnic_rel_ack_every;
extern unsigned int usnic_rel_retry_limit;

/* Root of /sys/kernel/debug/usnic_rel, or an error pointer when debugfs is off. */
extern struct dentry *usnic_rel_debugfs_root;

int usnic_rel_chardev_init(void);
void usnic_rel_chardev_exit(void);

void usnic_rel_debugfs_init(void);
void usnic_rel_debugfs_exit(void);

#endif /* _USNIC_REL_H */
