// SPDX-License-Identifier: GPL-2.0
/*
 * usnic_rel: rings shared with userspace. Userspace can write anything into
 * them at any time, so the kernel keeps its own index privately, reads the
 * user's index once with acquire, and refuses an index that cannot be right.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "ring_check.h"
#include "usnic_rel.h"

/*
 * Zeroed memory userspace may map (VM_USERMAP), charged to the caller's
 * memory cgroup page by page: vmalloc_user() is not charged, and the vmalloc
 * variants that take both a gfp mask and VM flags are not exported. Freed
 * with vfree(), which gives back the pages and their array
 * (VM_MAP_PUT_PAGES).
 */
void *usnic_rel_vmalloc_user(size_t size)
{
	unsigned long i, n = PAGE_ALIGN(size) >> PAGE_SHIFT;
	struct page **pages;
	void *mem;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				      __GFP_NOWARN);
		if (!pages[i])
			goto err;
	}
	mem = vmap(pages, n, VM_MAP | VM_USERMAP | VM_MAP_PUT_PAGES,
		   PAGE_KERNEL);
	if (mem)
		return mem;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

int usnic_rel_ring_alloc(struct usnic_rel_ring *ring, u32 entries,
			 u32 entry_size)
{
	size_t size = USNIC_REL_RING_DESC_OFF + (size_t)entries * entry_size;

	if (!is_power_of_2(entries))
		return -EINVAL;
	size = PAGE_ALIGN(size);
	ring->mem = usnic_rel_vmalloc_user(size);
	if (!ring->mem)
		return -ENOMEM;
	ring->hdr = ring->mem;
	ring->desc = ring->mem + USNIC_REL_RING_DESC_OFF;
	ring->entries = entries;
	ring->entry_size = entry_size;
	ring->size = size;
	ring->kidx = 0;
	ring->corrupt = false;
	return 0;
}

void usnic_rel_ring_free(struct usnic_rel_ring *ring)
{
	vfree(ring->mem);
	ring->mem = NULL;
}

static void usnic_rel_ring_mark_corrupt(struct usnic_rel_ep *ep,
					struct usnic_rel_ring *ring)
{
	if (!ring->corrupt) {
		ring->corrupt = true;
		usnic_rel_count(ep, USNIC_REL_CNT_RING_CORRUPT, 1);
	}
}

/*
 * Entries userspace has produced and the kernel not yet consumed, for a ring
 * userspace produces into. A tail more than a ring ahead of our head is a
 * bug or an attack: the ring is marked corrupt and never read again.
 * Callers serialise on the ring's consumer lock.
 */
u32 usnic_rel_ring_avail(struct usnic_rel_ep *ep, struct usnic_rel_ring *ring)
{
	u32 tail, n;

	if (ring->corrupt)
		return 0;
	/* Pairs with userspace's release of tail: entries before it are written. */
	tail = smp_load_acquire(&ring->hdr->tail);
	if (usnic_rel_ring_count(tail, ring->kidx, ring->entries, &n)) {
		usnic_rel_ring_mark_corrupt(ep, ring);
		return 0;
	}
	return n;
}

/* Free CQ slots not promised to a send in progress. Caller holds rx_lock. */
u32 usnic_rel_cq_space(struct usnic_rel_ep *ep)
{
	struct usnic_rel_ring *cq = &ep->cq;
	u32 head, used;

	lockdep_assert_held(&ep->rx_lock);
	if (cq->corrupt)
		return 0;
	/* Pairs with userspace's release of head: it is done reading those slots. */
	head = smp_load_acquire(&cq->hdr->head);
	if (usnic_rel_ring_count(cq->kidx, head, cq->entries, &used)) {
		usnic_rel_ring_mark_corrupt(ep, cq);
		return 0;
	}
	used += ep->cq_reserved;
	return used >= cq->entries ? 0 : cq->entries - used;
}

/*
 * Publish a CQE in a slot the caller made sure of (usnic_rel_cq_space()).
 * Caller holds rx_lock and wakes the context's waiters after unlocking.
 */
void usnic_rel_cq_post(struct usnic_rel_ep *ep, const struct usnic_rel_cqe *cqe)
{
	struct usnic_rel_ring *cq = &ep->cq;
	struct usnic_rel_cqe *slot;

	lockdep_assert_held(&ep->rx_lock);
	slot = cq->desc + (size_t)(cq->kidx & (cq->entries - 1)) * sizeof(*slot);
	memcpy(slot, cqe, sizeof(*slot));
	/* The entry must be visible before the tail that publishes it. */
	smp_store_release(&cq->hdr->tail, ++cq->kidx);
}

/* Post @cqe into the CQ slot reserved for it (ep->cq_reserved). */
void usnic_rel_cq_post_reserved(struct usnic_rel_ep *ep,
				const struct usnic_rel_cqe *cqe)
{
	spin_lock_bh(&ep->rx_lock);
	ep->cq_reserved--;
	usnic_rel_cq_post(ep, cqe);
	spin_unlock_bh(&ep->rx_lock);
}
