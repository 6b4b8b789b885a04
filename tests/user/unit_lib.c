// SPDX-License-Identifier: MIT
/*
 * Host unit test, no module needed: every public function refuses NULL and
 * bad arguments with -EINVAL before touching the kernel, and every error the
 * library returns has a message of its own.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <usnicrel.h>

#include "urt.h"

int main(void)
{
	struct urel_completion c[4];
	struct urel_ep_info info;
	struct urel_atomic at = { .op = UREL_ATOMIC_FETCH_ADD, .size = 8 };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct urel_ep *ep = (struct urel_ep *)1;
	struct urel_mr *mr = (struct urel_mr *)1;
	urel_peer_t peer = 7;
	char buf[8] = { 0 };
	static const int codes[] = { ENOENT, ENOTTY, EPROTO,	   EAGAIN,     ENOBUFS,	  EMSGSIZE,
				     ENXIO,  EEXIST, EAFNOSUPPORT, EOPNOTSUPP, ESHUTDOWN, EIO };

	URT_CHECK_EQ(urel_device_fd(NULL), -EINVAL);
	URT_CHECK_EQ(urel_device_wait(NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_device_progress(NULL, 0), -EINVAL);

	URT_CHECK_EQ(urel_ep_create(NULL, (struct sockaddr *)&sin, sizeof(sin), NULL, &ep),
		     -EINVAL);
	URT_CHECK(ep == NULL);
	URT_CHECK_EQ(urel_ep_create(NULL, NULL, 0, NULL, NULL), -EINVAL);
	URT_CHECK_EQ(urel_ep_destroy(NULL), -EINVAL);
	URT_CHECK_EQ(urel_ep_query(NULL, &info), -EINVAL);

	URT_CHECK_EQ(urel_av_insert(NULL, (struct sockaddr *)&sin, sizeof(sin), &peer), -EINVAL);
	URT_CHECK_EQ(urel_av_remove(NULL, 1), -EINVAL);

	URT_CHECK_EQ(urel_mr_reg(NULL, buf, sizeof(buf), 0, &mr), -EINVAL);
	URT_CHECK(mr == NULL);
	URT_CHECK_EQ(urel_mr_reg(NULL, buf, sizeof(buf), 0, NULL), -EINVAL);
	URT_CHECK_EQ(urel_mr_dereg(NULL), -EINVAL);
	URT_CHECK_EQ(urel_mr_rkey(NULL), 0);

	URT_CHECK_EQ(urel_ep_send(NULL, 1, UREL_CHAN_CMD, buf, 1, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_sendv(NULL, 1, UREL_CHAN_CMD, NULL, 0, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_flush(NULL), -EINVAL);
	URT_CHECK_EQ(urel_ep_poll_cq(NULL, c, 4), -EINVAL);
	URT_CHECK_EQ(urel_ep_release_recv(NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_put(NULL, 1, buf, 1, 1, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_get(NULL, 1, buf, 1, 1, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_atomic(NULL, 1, &at, 1, 0, NULL, 0), -EINVAL);
	URT_CHECK_EQ(urel_ep_set_recv_handler(NULL, NULL, NULL), -EINVAL);
	URT_CHECK_EQ(urel_ep_progress(NULL, 0), -EINVAL);

	/* Every library-specific failure has its own explanation. */
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *msg = urel_strerror(-codes[i]);

		URT_CHECK(msg && *msg);
		URT_CHECK(strcmp(msg, strerror(codes[i])) != 0);
		for (size_t j = 0; j < i; j++)
			URT_CHECK(strcmp(msg, urel_strerror(-codes[j])) != 0);
	}
	URT_CHECK(strstr(urel_strerror(-ENOBUFS), "staging") != NULL);
	URT_CHECK(strstr(urel_strerror(-EAGAIN), "poll") != NULL);
	return urt_done("unit_lib");
}
