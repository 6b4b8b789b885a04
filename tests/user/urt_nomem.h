/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures on demand for tests linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign
 * (the Makefile does so for tests named vm_nomem_*): every allocation of the
 * library and the test goes through these wrappers, and while the process
 * has armed them (every thread, a progress thread's too), about one in
 * urt_nomem_every fails (a pseudo-random sequence seeded per process).
 */
#ifndef URT_NOMEM_H
#define URT_NOMEM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);

static int urt_nomem_armed; /* atomic */
static unsigned int urt_nomem_every = 4;
static uint64_t urt_nomem_state = 0x9e3779b97f4a7c15ULL;
static uint64_t urt_nomem_failed; /* atomic: allocations refused */

static inline void urt_nomem_seed(uint64_t seed)
{
	urt_nomem_state = 0x9e3779b97f4a7c15ULL ^ (seed * 0xbf58476d1ce4e5b9ULL);
}

static inline int urt_nomem_fail(void)
{
	uint64_t x;

	if (!__atomic_load_n(&urt_nomem_armed, __ATOMIC_RELAXED))
		return 0;
	/* xorshift64; a racy update only changes which calls fail. */
	x = __atomic_load_n(&urt_nomem_state, __ATOMIC_RELAXED);
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	__atomic_store_n(&urt_nomem_state, x, __ATOMIC_RELAXED);
	if (x % urt_nomem_every)
		return 0;
	__atomic_fetch_add(&urt_nomem_failed, 1, __ATOMIC_RELAXED);
	return 1;
}

void *__wrap_malloc(size_t size)
{
	return urt_nomem_fail() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return urt_nomem_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return urt_nomem_fail() ? NULL : __real_realloc(p, size);
}

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	return urt_nomem_fail() ? ENOMEM : __real_posix_memalign(p, align, size);
}

#endif /* URT_NOMEM_H */
