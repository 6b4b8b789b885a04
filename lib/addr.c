// SPDX-License-Identifier: MIT
/*
 * libusnicrel: converting socket addresses to and from the module's
 * struct usnic_rel_addr.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "internal.h"

int urel_addr_from_sockaddr(struct usnic_rel_addr *out, const struct sockaddr *sa, socklen_t len)
{
	memset(out, 0, sizeof(*out));
	if (!sa || len < (socklen_t)sizeof(sa_family_t))
		return -EINVAL;
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in sin;

		if (len < (socklen_t)sizeof(sin))
			return -EINVAL;
		memcpy(&sin, sa, sizeof(sin));
		out->family = AF_INET;
		out->port = ntohs(sin.sin_port);
		memcpy(out->addr, &sin.sin_addr, sizeof(sin.sin_addr));
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;

		if (len < (socklen_t)sizeof(sin6))
			return -EINVAL;
		memcpy(&sin6, sa, sizeof(sin6));
		out->family = AF_INET6;
		out->port = ntohs(sin6.sin6_port);
		memcpy(out->addr, &sin6.sin6_addr, sizeof(sin6.sin6_addr));
		return 0;
	}
	return -EAFNOSUPPORT;
}

void urel_addr_to_sockaddr(struct sockaddr_storage *out, const struct usnic_rel_addr *a)
{
	memset(out, 0, sizeof(*out));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, sizeof(sin->sin_addr));
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		memcpy(&sin6->sin6_addr, a->addr, sizeof(sin6->sin6_addr));
	}
}
