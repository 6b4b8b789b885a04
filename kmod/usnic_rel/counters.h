/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: counters in sysfs. Device totals in
 * /sys/class/misc/usnic_rel/counters/<name>, each endpoint's own in
 * /sys/class/misc/usnic_rel/endpoints/ep<N>/counters/<name>.
 */
#ifndef _USNIC_REL_COUNTERS_H
#define _USNIC_REL_COUNTERS_H

struct device;
struct usnic_rel_ep;
struct usnic_rel_addr;

extern const char * const usnic_rel_counter_names[];

int usnic_rel_counters_alloc(struct usnic_rel_ep *ep);
u64 usnic_rel_counter_read(const struct usnic_rel_ep *ep, unsigned int c);

int usnic_rel_sysfs_init(struct device *dev);
void usnic_rel_sysfs_exit(void);
void usnic_rel_sysfs_ep_add(struct usnic_rel_ep *ep,
			    const struct usnic_rel_addr *addr);
void usnic_rel_sysfs_ep_remove(struct usnic_rel_ep *ep);

#endif /* _USNIC_REL_COUNTERS_H */
