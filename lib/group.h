/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: what the layers above the groups (lib/osc/) need of a group
 * beyond the public calls.
 */
#ifndef UREL_GROUP_H
#define UREL_GROUP_H

#include <usnicrel_msg.h>

/* The endpoint and tagged-messaging context the group's traffic uses. */
struct urel_ep *urel_group_ep(const struct urel_group *g);
struct urel_msg *urel_group_msg(const struct urel_group *g);

/* Group rank @rank's peer handle; 0 for this process or a bad rank. */
urel_peer_t urel_group_peer_handle(const struct urel_group *g, int rank);

#endif /* UREL_GROUP_H */
