/* SPDX-License-Identifier: MIT */
/*
 * Minimal checks for the userspace tests: a failed check prints where and why
 * and the test exits non-zero at the end.
 */
#ifndef URT_H
#define URT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int urt_failures;

#define URT_CHECK(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			urt_failures++;                                                            \
		}                                                                                  \
	} while (0)

#define URT_CHECK_EQ(a, b)                                                                         \
	do {                                                                                       \
		long long urt_a_ = (long long)(a), urt_b_ = (long long)(b);                        \
		if (urt_a_ != urt_b_) {                                                            \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,        \
				__LINE__, #a, #b, urt_a_, urt_b_);                                 \
			urt_failures++;                                                            \
		}                                                                                  \
	} while (0)

static inline int urt_done(const char *name)
{
	if (urt_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, urt_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

#endif /* URT_H */
