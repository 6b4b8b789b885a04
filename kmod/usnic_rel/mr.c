// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: registered memory. Pages are pinned for as long as the
 * registration lives (FOLL_LONGTERM) and charged to the registering mm's
 * pinned_vm against RLIMIT_MEMLOCK, as RDMA's umem does, so that a process
 * cannot pin more than it could mlock; the limit is checked before anything
 * is allocated. A random 64-bit rkey names the registration; its address
 * never travels on the wire. A registration serves one endpoint: the key is
 * refused on every other endpoint of the same file, as it is when unknown.
 *
 * Peers reach a registration from the receive path (softirq) by rkey: the
 * lookup (RCU) pins the struct with a reference, which keeps the pages
 * pinned but does not let the peer touch them. Each copy or atomic on the
 * pages is an access, counted in mr->access_cnt for just its duration
 * (mr_access.h). DEREG_MR unlinks the registration, sets the count's
 * REVOKED bit and sleeps only while accesses already counted finish; a GET
 * answered over many packets reads at each packet, so a peer that stops
 * acknowledging cannot hold DEREG_MR. There is no grace period, which an
 * unprivileged caller could otherwise force on every CPU in a loop. The
 * last reference unpins and frees. Unpinning may sleep, so a last
 * reference dropped in atomic context hands the freeing to usnic_rel_wq.
 * Pinning runs without ctx->lock, so poll() and the other ioctls of the
 * file do not wait behind a large registration.
 */
#include <linux/mm.h>
#include <linux/hugetlb_inline.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/capability.h>
#include <linux/overflow.h>
#include <linux/highmem.h>
#include <linux/atomic.h>

#include "usnic_rel.h"
#include "mr_access.h"
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
 * The registration @rkey names for @ep, referenced, or NULL: unknown, bound
 * to another endpoint and deregistered all look the same. Callable from any
 * context.
 */
struct usnic_rel_mr *usnic_rel_mr_lookup(struct usnic_rel_ep *ep, u64 rkey)
{
	struct usnic_rel_mr *mr;

	rcu_read_lock();
	mr = xa_load(&ep->ctx->mrs, lower_32_bits(rkey));
	if (mr && (mr->rkey != rkey || mr->ep_serial != ep->serial ||
		   usnic_rel_mr_access_revoked(&mr->access_cnt) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* End an access; the last one DEREG_MR waits for wakes it. */
static void usnic_rel_mr_access_done(struct usnic_rel_mr *mr)
{
	/* The caller's reference keeps @mr, and so the completion, alive. */
	if (usnic_rel_mr_access_end(&mr->access_cnt))
		complete(&mr->drained);
}

/*
 * Copy @len bytes between @buf and the registration at @offset, which the
 * caller checked against mr->length. Works in any context, never sleeps:
 * the pages are pinned for the registration's life. Returns -ENOKEY,
 * copying nothing, once DEREG_MR revoked it; DEREG_MR waits for a copy that
 * started before. The caller holds a reference on @mr.
 */
int usnic_rel_mr_copy(struct usnic_rel_mr *mr, u64 offset, void *buf, u32 len,
		      bool to_mr)
{
	u64 pos = offset_in_page(mr->addr) + offset;

	if (!usnic_rel_mr_access_begin(&mr->access_cnt))
		return -ENOKEY;
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
	usnic_rel_mr_access_done(mr);
	return 0;
}

/*
 * Write the payload of @pkt, a PUT still in @skb, to the registration at
 * @offset: as usnic_rel_mr_copy() to it, but straight from the skb's pages,
 * whatever their layout, so that the payload is copied only once.
 */
int usnic_rel_mr_write_pkt(struct usnic_rel_mr *mr, u64 offset,
			   const struct sk_buff *skb,
			   const struct usnic_rel_pkt *pkt)
{
	u64 pos = offset_in_page(mr->addr) + offset;
	u32 done, n;

	if (!usnic_rel_mr_access_begin(&mr->access_cnt))
		return -ENOKEY;
	for (done = 0; done < pkt->payload_len; done += n, pos += n) {
		struct page *page = mr->pages[pos >> PAGE_SHIFT];
		void *p = kmap_local_page(page);

		n = min_t(u32, pkt->payload_len - done,
			  PAGE_SIZE - offset_in_page(pos));
		usnic_rel_rx_copy(skb, pkt, done, p + offset_in_page(pos), n);
		flush_dcache_page(page);
		kunmap_local(p);
	}
	usnic_rel_mr_access_done(mr);
	return 0;
}

/*
 * Run one atomic on the operand at @offset (checked against mr->length by the
 * caller), atomically against the owner's CPU accesses and other atomics.
 * Returns 0 with the value before in @old, -EINVAL when the operand's
 * address is not naturally aligned, or -ENOKEY once DEREG_MR revoked it.
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
	if (!usnic_rel_mr_access_begin(&mr->access_cnt))
		return -ENOKEY;
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
	usnic_rel_mr_access_done(mr);
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

/* Insert @mr under a fresh random key. Caller holds ctx->lock. */
static int usnic_rel_mr_insert(struct usnic_rel_ctx *ctx, struct usnic_rel_mr *mr)
{
	int ret = -EBUSY, tries;
	u64 rkey;

	/* Indexed by the low half; the whole key must match (lookup). */
	for (tries = 0; tries < 16 && ret == -EBUSY; tries++) {
		rkey = get_random_u64();
		if (!rkey)
			continue;
		ret = xa_insert(&ctx->mrs, lower_32_bits(rkey), mr,
				GFP_KERNEL_ACCOUNT);
	}
	if (!ret)
		mr->rkey = rkey;
	return ret;
}

/*
 * Before Linux 6.2 a read-only long-term pin takes the page the mapping
 * shows now, even where the process's next write replaces it (copy on
 * write): the shared zero page, small or huge, of memory never written,
 * or the file's page in a private file mapping. Peers would go on reading
 * that page after the process wrote. In such mappings pin the page a
 * write fault gives the process instead, as later kernels do themselves
 * (then this finds nothing to do). @pages holds @n pins from @addr on;
 * each stays pinned, replaced or not, whatever this returns.
 */
static int usnic_rel_mr_unshare(struct page **pages, unsigned long n,
				unsigned long addr, unsigned int gup_flags)
{
	struct mm_struct *mm = current->mm;
	struct page **fresh = NULL;
	unsigned long i = 0, run;
	int ret = 0;

	while (i < n) {
		unsigned long at = addr + i * PAGE_SIZE;
		unsigned int flags = gup_flags | FOLL_WRITE;
		struct vm_area_struct *vma;
		bool cow;

		if (PageAnon(pages[i])) {
			i++;
			continue;
		}
		for (run = 1; i + run < n && !PageAnon(pages[i + run]); run++)
			;
		mmap_read_lock(mm);
		vma = vma_lookup(mm, at);
		cow = vma && is_cow_mapping(vma->vm_flags);
		if (vma)
			run = min(run, (vma->vm_end - at) >> PAGE_SHIFT);
		/* Not writable: forced, as ptrace writes; hugetlb takes no force. */
		if (cow && !(vma->vm_flags & VM_WRITE)) {
			if (is_vm_hugetlb_page(vma))
				cow = false;
			flags |= FOLL_FORCE;
		}
		mmap_read_unlock(mm);
		if (!cow) {
			i += run;
			continue;
		}
		if (!fresh) {
			fresh = kmalloc_array(n, sizeof(*fresh), GFP_KERNEL);
			if (!fresh)
				return -ENOMEM;
		}
		ret = pin_user_pages_fast(at, run, flags, fresh);
		if (ret != run) {
			if (ret > 0)
				unpin_user_pages(fresh, ret);
			ret = ret < 0 ? ret : -EFAULT;
			break;
		}
		ret = 0;
		unpin_user_pages(pages + i, run);
		memcpy(pages + i, fresh, run * sizeof(*fresh));
		i += run;
	}
	kfree(fresh);
	return ret;
}

/* Pin the pages of @mr for @ep. Runs without ctx->lock: it may take long. */
static int usnic_rel_mr_pin(struct usnic_rel_ep *ep, struct usnic_rel_mr *mr,
			    unsigned long start, unsigned int gup_flags,
			    unsigned long *pinned)
{
	unsigned long at;
	int got, ret;

	while (*pinned < mr->npages) {
		at = start + *pinned * PAGE_SIZE;
		got = pin_user_pages_fast(at, min(mr->npages - *pinned,
						  USNIC_REL_PIN_CHUNK),
					  gup_flags, mr->pages + *pinned);
		if (got <= 0)
			return got ?: -EFAULT;
		*pinned += got;
		if (!(gup_flags & FOLL_WRITE)) {
			ret = usnic_rel_mr_unshare(mr->pages + *pinned - got,
						   got, at, gup_flags);
			if (ret)
				return ret;
		}
		/* A test may hold us here (fault.c), after the first pages. */
		if (*pinned == (unsigned long)got && usnic_rel_fault_pin_wait(ep))
			return -EINTR;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/* REG_MR. Takes ctx->lock itself, and not while pinning. */
int usnic_rel_mr_register(struct usnic_rel_ctx *ctx, struct usnic_rel_reg_mr *arg)
{
	unsigned int gup_flags = FOLL_LONGTERM;
	unsigned long start, npages, pinned = 0;
	struct usnic_rel_ep *ep;
	struct usnic_rel_mr *mr;
	u64 end, serial;
	int ret;

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

	ep = usnic_rel_ep_get(ctx, arg->ep_id);
	if (!ep)
		return -EINVAL;
	serial = ep->serial;

	/* The limit first: over it, nothing is allocated. */
	ret = usnic_rel_mr_charge(current->mm, npages);
	if (ret)
		goto out_put;
	ret = -ENOMEM;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		goto err_uncharge;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->drained);
	INIT_WORK(&mr->free_work, usnic_rel_mr_free_work);
	mr->addr = arg->addr;
	mr->length = arg->length;
	mr->access = arg->access;
	mr->npages = npages;
	mr->ep_serial = serial;
	/* The length is the caller's: a failed huge allocation is its error, no warning. */
	mr->pages = kvcalloc(npages, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!mr->pages) {
		kfree(mr);
		goto err_uncharge;
	}
	mmgrab(current->mm);
	mr->mm = current->mm;

	ret = usnic_rel_mr_pin(ep, mr, start, gup_flags, &pinned);
	if (ret)
		goto err;
	mutex_lock(&ctx->lock);
	ret = usnic_rel_mr_insert(ctx, mr);
	mutex_unlock(&ctx->lock);
	if (ret)
		goto err;
	arg->rkey = mr->rkey;
	goto out_put;

err:
	usnic_rel_mr_free(mr, pinned);
	goto out_put;
err_uncharge:
	atomic64_sub(npages, &current->mm->pinned_vm);
out_put:
	usnic_rel_ep_put(ep);
	return ret;
}

/*
 * Cut off the accesses under way and drop the context's reference: once
 * this returns no peer reads or writes the pages. May sleep, but only while
 * a copy or atomic that started before runs to its end (no sleeping in
 * there, at most a packet's bytes): uninterruptible is short.
 */
static void usnic_rel_mr_revoke(struct usnic_rel_mr *mr)
{
	if (usnic_rel_mr_access_revoke(&mr->access_cnt))
		wait_for_completion(&mr->drained);
	usnic_rel_mr_put(mr, true);
}

/* DEREG_MR. Takes ctx->lock itself, and not while waiting for accesses. */
int usnic_rel_mr_deregister(struct usnic_rel_ctx *ctx, u64 rkey)
{
	struct usnic_rel_mr *mr;

	mutex_lock(&ctx->lock);
	mr = xa_load(&ctx->mrs, lower_32_bits(rkey));
	if (mr && mr->rkey == rkey)
		xa_erase(&ctx->mrs, lower_32_bits(rkey));
	else
		mr = NULL;
	mutex_unlock(&ctx->lock);
	if (!mr)
		return -EINVAL;
	usnic_rel_mr_revoke(mr);
	return 0;
}

void usnic_rel_mr_destroy_all(struct usnic_rel_ctx *ctx)
{
	struct usnic_rel_mr *mr;
	unsigned long idx;

	/* The file is going away: no ioctl can race with this. */
	xa_for_each(&ctx->mrs, idx, mr) {
		xa_erase(&ctx->mrs, idx);
		usnic_rel_mr_revoke(mr);
	}
	xa_destroy(&ctx->mrs);
}
