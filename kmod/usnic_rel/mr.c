// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: registered memory. Pages are pinned for as long as the
 * registration lives (FOLL_LONGTERM) and charged to the registering mm's
 * pinned_vm against RLIMIT_MEMLOCK, as RDMA's umem does, so that a process
 * cannot pin more than it could mlock. A random rkey names the registration;
 * its address never travels on the wire.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/capability.h>
#include <linux/overflow.h>

#include "usnic_rel.h"

/* Pages asked of pin_user_pages_fast() at a time: its count is an int. */
#define USNIC_REL_PIN_CHUNK	1024UL

#define USNIC_REL_WRITABLE	(USNIC_REL_ACCESS_LOCAL_WRITE | \
				 USNIC_REL_ACCESS_REMOTE_WRITE | \
				 USNIC_REL_ACCESS_REMOTE_ATOMIC)

static void usnic_rel_mr_free(struct usnic_rel_mr *mr, unsigned long pinned)
{
	unpin_user_pages_dirty_lock(mr->pages, pinned,
				    mr->access & USNIC_REL_WRITABLE);
	atomic64_sub(mr->npages, &mr->mm->pinned_vm);
	mmdrop(mr->mm);
	kvfree(mr->pages);
	kfree(mr);
}

static int usnic_rel_mr_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(npages, &mm->pinned_vm);

	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/* Caller holds ctx->lock. */
int usnic_rel_mr_register(struct usnic_rel_ctx *ctx, struct usnic_rel_reg_mr *arg)
{
	unsigned int gup_flags = FOLL_LONGTERM;
	unsigned long start, npages, pinned = 0;
	struct usnic_rel_mr *mr;
	u64 end;
	int ret, tries;
	u32 rkey;

	if (!arg->length || arg->access & ~USNIC_REL_ACCESS_ALL ||
	    check_add_overflow(arg->addr, arg->length, &end) ||
	    end > TASK_SIZE)
		return -EINVAL;
	start = arg->addr & PAGE_MASK;
	npages = (PAGE_ALIGN(end) - start) >> PAGE_SHIFT;
	/* kvmalloc() refuses (and warns about) arrays of more than INT_MAX bytes. */
	if (npages > INT_MAX / sizeof(struct page *))
		return -ENOMEM;
	if (arg->access & USNIC_REL_WRITABLE)
		gup_flags |= FOLL_WRITE;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	mr->addr = arg->addr;
	mr->length = arg->length;
	mr->access = arg->access;
	mr->npages = npages;
	/* The length is the caller's: a failed huge allocation is its error, no warning. */
	mr->pages = kvcalloc(npages, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!mr->pages) {
		kfree(mr);
		return -ENOMEM;
	}
	ret = usnic_rel_mr_charge(current->mm, npages);
	if (ret) {
		kvfree(mr->pages);
		kfree(mr);
		return ret;
	}
	mmgrab(current->mm);
	mr->mm = current->mm;

	while (pinned < npages) {
		ret = pin_user_pages_fast(start + pinned * PAGE_SIZE,
					  min(npages - pinned, USNIC_REL_PIN_CHUNK),
					  gup_flags, mr->pages + pinned);
		if (ret <= 0) {
			ret = ret ?: -EFAULT;
			goto err;
		}
		pinned += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		cond_resched();
	}

	for (tries = 0; tries < 16; tries++) {
		rkey = get_random_u32();
		ret = xa_insert(&ctx->mrs, rkey, mr, GFP_KERNEL_ACCOUNT);
		if (ret != -EBUSY)
			break;
	}
	if (ret)
		goto err;
	mr->rkey = rkey;
	arg->rkey = rkey;
	return 0;

err:
	usnic_rel_mr_free(mr, pinned);
	return ret;
}

/* Caller holds ctx->lock. */
int usnic_rel_mr_deregister(struct usnic_rel_ctx *ctx, u32 rkey)
{
	struct usnic_rel_mr *mr = xa_erase(&ctx->mrs, rkey);

	if (!mr)
		return -EINVAL;
	usnic_rel_mr_free(mr, mr->npages);
	return 0;
}

void usnic_rel_mr_destroy_all(struct usnic_rel_ctx *ctx)
{
	struct usnic_rel_mr *mr;
	unsigned long rkey;

	xa_for_each(&ctx->mrs, rkey, mr) {
		xa_erase(&ctx->mrs, rkey);
		usnic_rel_mr_free(mr, mr->npages);
	}
	xa_destroy(&ctx->mrs);
}
