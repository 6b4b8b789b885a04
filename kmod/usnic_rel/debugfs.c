// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the debugfs directory that per-endpoint and per-peer files hang from.
 */
#include <linux/debugfs.h>

#include "usnic_rel.h"

struct dentry *usnic_rel_debugfs_root;

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
