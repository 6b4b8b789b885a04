// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: registered memory. Pages are pinned for as long as the
 * registration lives (FOLL_LONGTERM) and charged to the registering mm's
 * pinned_vm against RLIMIT_MEMLOCK, as RDMA's umem does, so that a process
 * cannot pin more than it could mlock. A random rkey names the registration;
 * its address never travels on the wire.
 *
 * Peers reach a registration from the receive path (softirq) by rkey: the
 * lookup pins it with a reference, so DEREG_MR only unlinks it and the last
 * reference frees it. Unpinning may sleep, so a last reference dropped in
 * atomic context hands the freeing to usnic_rel_wq.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/capability.h>
#include <linux/overflow.h>
#include <linux/highmem.h>
#include <linux/atomic.h>

#include "usnic_rel.h"
#include "wire.h"

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
	/* A lookup may still be looking at it under RCU. */
	kfree_rcu(mr, rcu);
}

static void usnic_rel_mr_free_work(struct work_struct *work)
{
	struct usnic_rel_mr *mr = container_of(work, struct usnic_rel_mr,
					       free_work);

	usnic_rel_mr_free(mr, mr->npages);
}

/*
 * Drop a reference. Unpinning may sleep: pass @can_sleep false from any
 * context that holds a spinlock or runs in softirq.
 */
void usnic_rel_mr_put(struct usnic_rel_mr *mr, bool can_sleep)
{
	if (!refcount_dec_and_test(&mr->ref))
		return;
	if (can_sleep)
		usnic_rel_mr_free(mr, mr->npages);
	else
		queue_work(usnic_rel_wq, &mr->free_work);
}

/*
 * The registration @rkey names in @ctx, referenced, or NULL. Wire rkeys are
 * 64 bits wide; ours use 32. Callable from any context.
 */
struct usnic_rel_mr *usnic_rel_mr_lookup(struct usnic_rel_ctx *ctx, u64 rkey)
{
	struct usnic_rel_mr *mr;

	if (rkey > U32_MAX)
		return NULL;
	rcu_read_lock();
	mr = xa_load(&ctx->mrs, rkey);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * Copy @len bytes between @buf and the registration at @offset, which the
 * caller checked against mr->length. Works in any context: the pages are
 * pinned for the registration's life.
 */
void usnic_rel_mr_copy(struct usnic_rel_mr *mr, u64 offset, void *buf, u32 len,
		       bool to_mr)
{
	u64 pos = offset_in_page(mr->addr) + offset;

	while (len) {
		struct page *page = mr->pages[pos >> PAGE_SHIFT];
		u32 off = offset_in_page(pos);
		u32 n = min_t(u32, len, PAGE_SIZE - off);
		void *p = kmap_local_page(page);

		if (to_mr) {
			memcpy(p + off, buf, n);
			flush_dcache_page(page);
		} else {
			memcpy(buf, p + off, n);
		}
		kunmap_local(p);
		buf += n;
		pos += n;
		len -= n;
	}
}

/*
 * Run one atomic on the operand at @offset (checked against mr->length by the
 * caller), atomically against the owner's CPU accesses and other atomics.
 * Returns 0 with the value before in @old, or -EINVAL when the operand's
 * address is not naturally aligned.
 */
int usnic_rel_mr_atomic(struct usnic_rel_mr *mr, u64 offset, u8 op, u8 size,
			u64 operand, u64 compare, u64 *old)
{
	u64 pos = offset_in_page(mr->addr) + offset;
	struct page *page;
	void *p;

	/* Aligned to its size, the operand cannot straddle two pages. */
	if ((mr->addr + offset) & (size - 1))
		return -EINVAL;
	page = mr->pages[pos >> PAGE_SHIFT];
	p = kmap_local_page(page) + offset_in_page(pos);
	if (size == 8) {
		u64 *v = p;

		if (op == USNIC_REL_ATOMIC_FADD)
			*old = atomic64_fetch_add(operand, (atomic64_t *)v);
		else if (op == USNIC_REL_ATOMIC_CAS)
			*old = cmpxchg64(v, compare, operand);
		else
			*old = xchg(v, operand);
	} else {
		u32 *v = p;

		if (op == USNIC_REL_ATOMIC_FADD)
			*old = (u32)atomic_fetch_add((u32)operand, (atomic_t *)v);
		else if (op == USNIC_REL_ATOMIC_CAS)
			*old = cmpxchg(v, (u32)compare, (u32)operand);
		else
			*old = xchg(v, (u32)operand);
	}
	flush_dcache_page(page);
	kunmap_local(p);
	return 0;
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
	refcount_set(&mr->ref, 1);
	INIT_WORK(&mr->free_work, usnic_rel_mr_free_work);
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
	/* Operations under way keep it until they are done. */
	usnic_rel_mr_put(mr, true);
	return 0;
}

void usnic_rel_mr_destroy_all(struct usnic_rel_ctx *ctx)
{
	struct usnic_rel_mr *mr;
	unsigned long rkey;

	xa_for_each(&ctx->mrs, rkey, mr) {
		xa_erase(&ctx->mrs, rkey);
		usnic_rel_mr_put(mr, true);
	}
	xa_destroy(&ctx->mrs);
}
