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
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <net/net_namespace.h>

#include "usnic_rel.h"

static int usnic_rel_open(struct inode *inode, struct file *file)
{
	struct usnic_rel_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->eps, XA_FLAGS_ALLOC);
	xa_init(&ctx->mrs);
	init_waitqueue_head(&ctx->wq);
	/* Endpoints live in the opener's network namespace. */
	ctx->net = get_net(current->nsproxy->net_ns);
	file->private_data = ctx;
	return 0;
}

/* Last reference to the file: no ioctl, mmap or poll can be running. */
static int usnic_rel_release(struct inode *inode, struct file *file)
{
	struct usnic_rel_ctx *ctx = file->private_data;

	usnic_rel_ep_destroy_all(ctx);
	usnic_rel_mr_destroy_all(ctx);
	put_net(ctx->net);
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

/*
 * Copy an ioctl argument that starts with __u32 size, __u32 flags. A caller
 * built against an older header may pass less, down to @min_size (the end of
 * the last field the ioctl needs; what is missing reads as zero); a newer
 * one may pass more if the bytes we do not know are zero. Returns the
 * caller's size or a negative errno.
 */
static int usnic_rel_copy_in(void *karg, size_t ksize, size_t min_size,
			     void __user *uarg)
{
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size || usize > PAGE_SIZE)
		return -EINVAL;
	ret = copy_struct_from_user(karg, ksize, uarg, usize);
	if (ret)
		return ret == -E2BIG ? -EINVAL : ret;
	return usize;
}

static int usnic_rel_copy_out(void __user *uarg, const void *karg,
			      size_t ksize, u32 usize)
{
	return copy_to_user(uarg, karg, min_t(size_t, ksize, usize)) ? -EFAULT : 0;
}

static long usnic_rel_ioctl_create_ep(struct usnic_rel_ctx *ctx,
				      void __user *uarg)
{
	struct usnic_rel_create_ep arg;
	struct usnic_rel_ep *ep = NULL;
	int usize, ret;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_create_ep, region),
				  uarg);
	if (usize < 0)
		return usize;
	mutex_lock(&ctx->lock);
	ret = usnic_rel_ep_create(ctx, &arg);
	if (!ret) {
		ret = usnic_rel_copy_out(uarg, &arg, sizeof(arg), usize);
		/* The caller cannot learn the id: do not leave it behind. */
		if (ret)
			ep = usnic_rel_ep_unlist(ctx, arg.ep_id);
	}
	mutex_unlock(&ctx->lock);
	if (ep)
		usnic_rel_ep_teardown(ep);
	return ret;
}

static long usnic_rel_ioctl_destroy_ep(struct usnic_rel_ctx *ctx,
				       void __user *uarg)
{
	struct usnic_rel_destroy_ep arg;
	struct usnic_rel_ep *ep;
	int usize;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_destroy_ep, ep_id),
				  uarg);
	if (usize < 0)
		return usize;
	if (arg.flags || arg.reserved)
		return -EINVAL;
	mutex_lock(&ctx->lock);
	ep = usnic_rel_ep_unlist(ctx, arg.ep_id);
	mutex_unlock(&ctx->lock);
	if (!ep)
		return -EINVAL;
	/* Waits for a grace period: other ioctls of the context go on. */
	usnic_rel_ep_teardown(ep);
	return 0;
}

static long usnic_rel_ioctl_av_insert(struct usnic_rel_ctx *ctx,
				      void __user *uarg)
{
	struct usnic_rel_av_insert arg;
	struct usnic_rel_ep *ep;
	int usize, ret;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_av_insert, addr),
				  uarg);
	if (usize < 0)
		return usize;
	if (arg.flags || arg.peer || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	mutex_lock(&ctx->lock);
	ep = xa_load(&ctx->eps, arg.ep_id);
	ret = ep ? usnic_rel_av_insert(ep, &arg) : -EINVAL;
	if (!ret) {
		ret = usnic_rel_copy_out(uarg, &arg, sizeof(arg), usize);
		if (ret)
			usnic_rel_av_remove(ep, arg.peer);
	}
	mutex_unlock(&ctx->lock);
	return ret;
}

static long usnic_rel_ioctl_av_remove(struct usnic_rel_ctx *ctx,
				      void __user *uarg)
{
	struct usnic_rel_av_remove arg;
	struct usnic_rel_ep *ep;
	int usize, ret;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_av_remove, peer),
				  uarg);
	if (usize < 0)
		return usize;
	if (arg.flags)
		return -EINVAL;
	mutex_lock(&ctx->lock);
	ep = xa_load(&ctx->eps, arg.ep_id);
	ret = ep ? usnic_rel_av_remove(ep, arg.peer) : -EINVAL;
	mutex_unlock(&ctx->lock);
	return ret;
}

static long usnic_rel_ioctl_reg_mr(struct usnic_rel_ctx *ctx, void __user *uarg)
{
	struct usnic_rel_reg_mr arg;
	int usize, ret;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_reg_mr, rkey),
				  uarg);
	if (usize < 0)
		return usize;
	if (arg.flags || arg.rkey || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	/* Pinning may take long: it runs without ctx->lock (mr.c). */
	ret = usnic_rel_mr_register(ctx, &arg);
	if (!ret) {
		ret = usnic_rel_copy_out(uarg, &arg, sizeof(arg), usize);
		if (ret)
			usnic_rel_mr_deregister(ctx, arg.rkey);
	}
	return ret;
}

static long usnic_rel_ioctl_dereg_mr(struct usnic_rel_ctx *ctx,
				     void __user *uarg)
{
	struct usnic_rel_dereg_mr arg;
	int usize;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_dereg_mr, rkey),
				  uarg);
	if (usize < 0)
		return usize;
	if (arg.flags)
		return -EINVAL;
	return usnic_rel_mr_deregister(ctx, arg.rkey);
}

/* Not under ctx->lock: endpoints ring their doorbells independently. */
static long usnic_rel_ioctl_doorbell(struct usnic_rel_ctx *ctx,
				     void __user *uarg)
{
	struct usnic_rel_doorbell arg;
	struct usnic_rel_ep *ep;
	int usize, ret;

	usize = usnic_rel_copy_in(&arg, sizeof(arg),
				  offsetofend(struct usnic_rel_doorbell, rings),
				  uarg);
	if (usize < 0)
		return usize;
	if (arg.flags || !arg.rings ||
	    arg.rings & ~USNIC_REL_DB_ALL)
		return -EINVAL;
	ep = usnic_rel_ep_get(ctx, arg.ep_id);
	if (!ep)
		return -EINVAL;
	ret = usnic_rel_doorbell(ep, arg.rings);
	usnic_rel_ep_put(ep);
	return ret;
}

/* The ioctl number without its size: the size field of the argument rules. */
#define USNIC_REL_IOC_BASE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long usnic_rel_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct usnic_rel_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;

	if (cmd == USNIC_REL_IOC_GET_ABI)
		return usnic_rel_get_abi(uarg);

	switch (USNIC_REL_IOC_BASE(cmd)) {
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_CREATE_EP):
		return usnic_rel_ioctl_create_ep(ctx, uarg);
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_DESTROY_EP):
		return usnic_rel_ioctl_destroy_ep(ctx, uarg);
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_AV_INSERT):
		return usnic_rel_ioctl_av_insert(ctx, uarg);
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_AV_REMOVE):
		return usnic_rel_ioctl_av_remove(ctx, uarg);
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_REG_MR):
		return usnic_rel_ioctl_reg_mr(ctx, uarg);
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_DEREG_MR):
		return usnic_rel_ioctl_dereg_mr(ctx, uarg);
	case USNIC_REL_IOC_BASE(USNIC_REL_IOC_DOORBELL):
		return usnic_rel_ioctl_doorbell(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

static int usnic_rel_mmap(struct file *file, struct vm_area_struct *vma)
{
	return usnic_rel_ep_mmap(file->private_data, vma);
}

static __poll_t usnic_rel_poll(struct file *file, poll_table *wait)
{
	struct usnic_rel_ctx *ctx = file->private_data;
	struct usnic_rel_ep *ep;
	unsigned long id;
	__poll_t mask = 0;

	poll_wait(file, &ctx->wq, wait);
	/* Queued before the CQ is read; pairs with usnic_rel_ctx_wake(). */
	smp_mb();
	mutex_lock(&ctx->lock);
	xa_for_each(&ctx->eps, id, ep) {
		if (usnic_rel_ep_readable(ep)) {
			mask = EPOLLIN | EPOLLRDNORM;
			break;
		}
	}
	mutex_unlock(&ctx->lock);
	return mask;
}

static const struct file_operations usnic_rel_fops = {
	.owner = THIS_MODULE,
	.open = usnic_rel_open,
	.release = usnic_rel_release,
	.unlocked_ioctl = usnic_rel_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = usnic_rel_mmap,
	.poll = usnic_rel_poll,
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
	/*
	 * Root only (the devtmpfs default): pinning memory and opening
	 * sockets is for the users the administrator lets in, through the
	 * group of udev/60-usnic-rel.rules.
	 */
	.mode = 0600,
};

int usnic_rel_chardev_init(void)
{
	int ret = misc_register(&usnic_rel_misc);

	if (ret)
		return ret;
	ret = usnic_rel_sysfs_init(usnic_rel_misc.this_device);
	if (ret)
		misc_deregister(&usnic_rel_misc);
	return ret;
}

void usnic_rel_chardev_exit(void)
{
	usnic_rel_sysfs_exit();
	misc_deregister(&usnic_rel_misc);
}
