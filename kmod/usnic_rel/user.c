// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: what each user holds. Every endpoint is a kernel socket plus
 * rings and buffers; a user may hold at most max_eps_per_user of them, over
 * all its open files and processes, counted by real uid as RLIMIT_NPROC
 * counts processes. The memory itself is charged to the creator's memory
 * cgroup (ring.c). Received packets its endpoints hold (out of order, or
 * waiting for buffers) come from the network, not from the user's
 * allocations: they count against max_rx_held_kb_per_user, over all of the
 * user's endpoints, and past it are dropped unacknowledged (sent again).
 */
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "usnic_rel.h"

struct usnic_rel_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned int eps;
	atomic_long_t rx_held;		/* truesize of the skbs its endpoints hold */
};

static DEFINE_HASHTABLE(usnic_rel_users, 6);
static DEFINE_MUTEX(usnic_rel_users_lock);

static struct usnic_rel_user *usnic_rel_user_find(kuid_t uid)
{
	struct usnic_rel_user *u;

	hash_for_each_possible(usnic_rel_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * Count one more endpoint for @uid: -EMFILE past max_eps_per_user. *@user
 * is its account, valid until the matching usnic_rel_user_put_ep().
 */
int usnic_rel_user_get_ep(kuid_t uid, struct usnic_rel_user **user)
{
	struct usnic_rel_user *u;
	int ret = 0;

	mutex_lock(&usnic_rel_users_lock);
	u = usnic_rel_user_find(uid);
	if (!u) {
		u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
		if (!u) {
			ret = -ENOMEM;
			goto out;
		}
		u->uid = uid;
		hash_add(usnic_rel_users, &u->node, __kuid_val(uid));
	}
	if (u->eps >= usnic_rel_max_eps_per_user) {
		ret = -EMFILE;
		/* max_eps_per_user >= 1: a new entry never gets here. */
		goto out;
	}
	u->eps++;
	*user = u;
out:
	mutex_unlock(&usnic_rel_users_lock);
	return ret;
}

void usnic_rel_user_put_ep(kuid_t uid)
{
	struct usnic_rel_user *u;

	mutex_lock(&usnic_rel_users_lock);
	u = usnic_rel_user_find(uid);
	if (!WARN_ON_ONCE(!u || !u->eps) && !--u->eps) {
		/* Its endpoints freed every skb they held first. */
		WARN_ON_ONCE(atomic_long_read(&u->rx_held));
		hash_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&usnic_rel_users_lock);
}

/*
 * Charge @bytes of a received packet about to be held to @user; false (and
 * nothing charged) past max_rx_held_kb_per_user. Any context.
 */
bool usnic_rel_user_hold(struct usnic_rel_user *user, unsigned int bytes)
{
	long limit = (long)usnic_rel_max_rx_held_kb_per_user << 10;

	if (atomic_long_add_return(bytes, &user->rx_held) > limit) {
		atomic_long_sub(bytes, &user->rx_held);
		return false;
	}
	return true;
}

void usnic_rel_user_unhold(struct usnic_rel_user *user, unsigned int bytes)
{
	atomic_long_sub(bytes, &user->rx_held);
}
