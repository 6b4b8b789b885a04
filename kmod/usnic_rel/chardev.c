// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: the /dev/usnic_rel misc device. Each open file is a context that
 * owns everything created through it and frees it on release.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "usnic_rel.h"
#include "../../include/uapi/usnic_rel.h"

struct usnic_rel_ctx {
	struct mutex lock;	/* serialises ioctls on this context */
};

static int usnic_rel_open(struct inode *inode, struct file *file)
{
	struct usnic_rel_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	file->private_data = ctx;
	return 0;
}

static int usnic_rel_release(struct inode *inode, struct file *file)
{
	struct usnic_rel_ctx *ctx = file->private_data;

	mutex_destroy(&ctx->lock);
	kfree(ctx);
	return 0;
}

static long usnic_rel_get_abi(void __user *arg)
{
	struct usnic_rel_abi_info info = {
		.abi_version = USNIC_REL_ABI_VERSION,
	};

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long usnic_rel_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case USNIC_REL_IOC_GET_ABI:
		return usnic_rel_get_abi(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations usnic_rel_fops = {
	.owner = THIS_MODULE,
	.open = usnic_rel_open,
	.release = usnic_rel_release,
	.unlocked_ioctl = usnic_rel_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", USNIC_REL_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static struct attribute *usnic_rel_dev_attrs[] = {
	&dev_attr_abi_version.attr,
	NULL,
};
ATTRIBUTE_GROUPS(usnic_rel_dev);

static struct miscdevice usnic_rel_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = USNIC_REL_DEVICE_NAME,
	.fops = &usnic_rel_fops,
	.groups = usnic_rel_dev_groups,
	.mode = 0666,
};

int usnic_rel_chardev_init(void)
{
	return misc_register(&usnic_rel_misc);
}

void usnic_rel_chardev_exit(void)
{
	misc_deregister(&usnic_rel_misc);
}
