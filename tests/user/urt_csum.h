/* SPDX-License-Identifier: MIT */
/*
 * The UDP checksum over IPv4 (RFC 768), for tests that build datagrams on a
 * raw socket: the module refuses a datagram without one.
 */
#ifndef URT_CSUM_H
#define URT_CSUM_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* One's complement sum of @len bytes as big-endian 16-bit words, into @sum. */
static inline uint32_t urt_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/*
 * The check field for the UDP header and payload at @udp (@len bytes, its
 * check field zero) from @src to @dst, network order; never 0, which would
 * mean none.
 */
static inline uint16_t urt_udp4_csum(struct in_addr src, struct in_addr dst, const void *udp,
				     size_t len)
{
	uint8_t pseudo[12] = { 0 };
	uint32_t sum;

	memcpy(pseudo, &src, 4);
	memcpy(pseudo + 4, &dst, 4);
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = len >> 8;
	pseudo[11] = len & 0xff;
	sum = urt_csum_add(urt_csum_add(0, pseudo, sizeof(pseudo)), udp, len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return htons(sum ? sum : 0xffff);
}

#endif /* URT_CSUM_H */
