// SPDX-License-Identifier: MIT
/*
 * urel provider: I/O vectors. The library sends, receives, puts and gets
 * one contiguous buffer, so an operation of several iovs goes through a
 * staging copy of the provider's: gathered before a send or write, scattered
 * after a receive or read. One iov needs no copy.
 */
#include <string.h>

#include "urel_fi.h"

/* The bytes of @count iovs into *@len; -FI_EINVAL past the limit or on overflow. */
int urel_fi_iov_len(const struct iovec *iov, size_t count, size_t *len)
{
	size_t total = 0;

	if (count > UREL_FI_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	for (size_t i = 0; i < count; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -FI_EINVAL;
		if (total + iov[i].iov_len < total)
			return -FI_EINVAL;
		total += iov[i].iov_len;
	}
	*len = total;
	return 0;
}

void urel_fi_iov_gather(void *dst, const struct iovec *iov, size_t count)
{
	char *d = dst;

	for (size_t i = 0; i < count; i++) {
		memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
}

/* Copy the first @len bytes of @src over the iovs (which hold at least @len). */
void urel_fi_iov_scatter(const struct iovec *iov, size_t count, const void *src, size_t len)
{
	const char *s = src;

	for (size_t i = 0; i < count && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, s, n);
		s += n;
		len -= n;
	}
}
