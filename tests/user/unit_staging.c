// SPDX-License-Identifier: MIT
/*
 * Host unit test: the staging buddy allocator hands out disjoint, aligned
 * blocks, reports -ENOBUFS when full and -EMSGSIZE when a request can never
 * fit, and merges everything back whatever the order of frees.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../lib/staging.h"

#include "urt.h"

#define AREA (1U << 20)

static uint8_t owner[AREA]; /* which live block covers each byte, 0 = none */

static void check_full_merge(struct urel_staging *s, size_t size)
{
	uint32_t off;

	URT_CHECK_EQ(s->free_bytes, (size >> s->unit_shift) << s->unit_shift);
	/* The largest block is whole again. */
	URT_CHECK_EQ(urel_staging_alloc(s, urel_staging_max_alloc(s), &off), 0);
	urel_staging_free(s, off);
}

static void random_round(size_t size, unsigned int seed)
{
	struct urel_staging s;
	uint32_t offs[512], lens[512];
	unsigned int live = 0;

	srand(seed);
	URT_CHECK_EQ(urel_staging_init(&s, size), 0);
	memset(owner, 0, sizeof(owner));
	for (int step = 0; step < 20000; step++) {
		if (live < 512 && (rand() % 3 || !live)) {
			uint32_t len = 1 + (uint32_t)rand() % 9000, off;
			int ret = urel_staging_alloc(&s, len, &off);

			if (ret) {
				URT_CHECK_EQ(ret, -ENOBUFS);
				continue;
			}
			URT_CHECK(off + len <= size);
			URT_CHECK_EQ(off % 64, 0);
			for (uint32_t i = 0; i < len; i++) {
				if (owner[off + i]) {
					URT_CHECK(!"overlapping blocks");
					break;
				}
				owner[off + i] = 1;
			}
			offs[live] = off;
			lens[live] = len;
			live++;
		} else {
			unsigned int k = (unsigned int)rand() % live;

			memset(owner + offs[k], 0, lens[k]);
			urel_staging_free(&s, offs[k]);
			offs[k] = offs[live - 1];
			lens[k] = lens[live - 1];
			live--;
		}
	}
	while (live) {
		live--;
		urel_staging_free(&s, offs[live]);
	}
	check_full_merge(&s, size);
	urel_staging_fini(&s);
}

int main(void)
{
	struct urel_staging s;
	uint32_t a, b, c;

	URT_CHECK_EQ(urel_staging_init(&s, 0), -EINVAL);
	urel_staging_fini(&s);

	URT_CHECK_EQ(urel_staging_init(&s, 4096), 0);
	URT_CHECK_EQ(urel_staging_alloc(&s, 0, &a), -EMSGSIZE);
	URT_CHECK_EQ(urel_staging_alloc(&s, 4097, &a), -EMSGSIZE);
	URT_CHECK_EQ(urel_staging_alloc(&s, 4096, &a), 0);
	URT_CHECK_EQ(urel_staging_alloc(&s, 1, &b), -ENOBUFS);
	urel_staging_free(&s, a);
	URT_CHECK_EQ(urel_staging_alloc(&s, 2000, &a), 0);
	URT_CHECK_EQ(urel_staging_alloc(&s, 2000, &b), 0);
	URT_CHECK(a != b);
	URT_CHECK_EQ(urel_staging_alloc(&s, 65, &c), -ENOBUFS);
	/* Freed out of order, the two halves still merge. */
	urel_staging_free(&s, b);
	urel_staging_free(&s, a);
	check_full_merge(&s, 4096);
	urel_staging_fini(&s);

	/* Not a power of two: 12 KiB is an 8 KiB and a 4 KiB block. */
	URT_CHECK_EQ(urel_staging_init(&s, 12288), 0);
	URT_CHECK_EQ(urel_staging_max_alloc(&s), 8192);
	URT_CHECK_EQ(urel_staging_alloc(&s, 8192, &a), 0);
	URT_CHECK_EQ(urel_staging_alloc(&s, 4096, &b), 0);
	URT_CHECK_EQ(urel_staging_alloc(&s, 64, &c), -ENOBUFS);
	urel_staging_free(&s, a);
	urel_staging_free(&s, b);
	URT_CHECK_EQ(s.free_bytes, 12288);
	urel_staging_fini(&s);

	/* Huge areas use bigger units so metadata stays bounded. */
	URT_CHECK_EQ(urel_staging_init(&s, 64U << 20), 0);
	URT_CHECK(s.nunits <= UREL_STAGING_MAX_UNITS);
	urel_staging_fini(&s);

	random_round(AREA, 1);
	random_round(AREA - 4096 * 3, 2);
	random_round(40960, 3);
	return urt_done("unit_staging");
}
