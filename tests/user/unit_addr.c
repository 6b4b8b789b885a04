// SPDX-License-Identifier: MIT
/*
 * Host unit test: socket addresses convert to the module's address format
 * and back, and anything but a whole IPv4 or IPv6 address is refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/un.h>

#include "../../lib/internal.h"

#include "urt.h"

int main(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(4791) };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(1) };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct usnic_rel_addr a;
	struct sockaddr_storage back;

	inet_pton(AF_INET, "10.1.2.3", &sin.sin_addr);
	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, (struct sockaddr *)&sin, sizeof(sin)), 0);
	URT_CHECK_EQ(a.family, AF_INET);
	URT_CHECK_EQ(a.port, 4791);
	URT_CHECK(a.addr[0] == 10 && a.addr[3] == 3 && a.addr[4] == 0 && a.addr[15] == 0);
	urel_addr_to_sockaddr(&back, &a);
	URT_CHECK(!memcmp(&back, &sin, sizeof(sin)));

	inet_pton(AF_INET6, "fd00::42", &sin6.sin6_addr);
	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, (struct sockaddr *)&sin6, sizeof(sin6)), 0);
	URT_CHECK_EQ(a.family, AF_INET6);
	URT_CHECK_EQ(a.port, 1);
	URT_CHECK(a.addr[0] == 0xfd && a.addr[15] == 0x42);
	urel_addr_to_sockaddr(&back, &a);
	URT_CHECK(!memcmp(&back, &sin6, sizeof(sin6)));

	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, (struct sockaddr *)&sin, sizeof(sin) - 1),
		     -EINVAL);
	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, (struct sockaddr *)&sin6, sizeof(sin)), -EINVAL);
	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, NULL, sizeof(sin)), -EINVAL);
	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, (struct sockaddr *)&sin, 0), -EINVAL);
	URT_CHECK_EQ(urel_addr_from_sockaddr(&a, (struct sockaddr *)&sun, sizeof(sun)),
		     -EAFNOSUPPORT);
	return urt_done("unit_addr");
}
