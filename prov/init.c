// SPDX-License-Identifier: MIT
/*
 * urel provider: the entry point libfabric loads (fi_prov_ini) and fi_getinfo:
 * what one RDM endpoint over libusnicrel offers, filtered against the hints.
 * Only libfabric's public headers are installed, so the checks are our own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

/* Messages from one endpoint to another are matched in the order they were sent. */
#define UREL_FI_MSG_ORDER FI_ORDER_SAS
/*
 * The largest message: the library's rendezvous registers a buffer that
 * RLIMIT_MEMLOCK does not allow at once piecewise, so memory is the limit.
 */
#define UREL_FI_MAX_MSG_CEILING (1ULL << 40)

size_t urel_fi_max_msg_size(void)
{
	return UREL_FI_MAX_MSG_CEILING;
}

/* The library's negative errno as a positive libfabric error code. */
int urel_fi_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EMSGSIZE:
		return FI_ETRUNC;
	case 0:
		return 0;
	default:
		return err;
	}
}

/*
 * The level given when the application leaves threading unspecified:
 * FI_UREL_THREADING (safe, fid, domain, completion or endpoint), else
 * FI_THREAD_SAFE. For applications known to call from one thread at a time
 * that do not say so in their hints (fi_pingpong); a bad value is refused
 * with a warning, and the level stays FI_THREAD_SAFE.
 */
enum fi_threading urel_fi_default_threading(void)
{
	static const struct {
		const char *name;
		enum fi_threading level;
	} names[] = {
		{ "safe", FI_THREAD_SAFE },	    { "fid", FI_THREAD_FID },
		{ "domain", FI_THREAD_DOMAIN },	    { "completion", FI_THREAD_COMPLETION },
		{ "endpoint", FI_THREAD_ENDPOINT },
	};
	char *want = NULL;

	if (fi_param_get_str(&urel_fi_prov, "threading", &want) != FI_SUCCESS || !want)
		return FI_THREAD_SAFE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(want, names[i].name))
			return names[i].level;
	}
	UREL_FI_WARN(FI_LOG_CORE, "FI_UREL_THREADING=%s unknown: FI_THREAD_SAFE\n", want);
	return FI_THREAD_SAFE;
}

/* The source address: FI_UREL_IFACE's, else the first up IPv4 non-loopback one, else loopback. */
static int urel_fi_default_src(struct sockaddr_storage *ss, socklen_t *len)
{
	struct ifaddrs *ifa, *i;
	int ret = -FI_ENODATA;
	char *want = NULL;

	if (fi_param_get_str(&urel_fi_prov, "iface", &want) != FI_SUCCESS)
		want = NULL;
	if (getifaddrs(&ifa))
		return -errno;
	for (int pass = 0; pass < 2 && ret; pass++) {
		for (i = ifa; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
			    !(i->ifa_flags & IFF_UP))
				continue;
			if (want ? strcmp(want, i->ifa_name)
				 : !pass && (i->ifa_flags & IFF_LOOPBACK))
				continue;
			memset(ss, 0, sizeof(*ss));
			memcpy(ss, i->ifa_addr, sizeof(struct sockaddr_in));
			*len = sizeof(struct sockaddr_in);
			ret = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	if (ret)
		UREL_FI_WARN(FI_LOG_FABRIC, "no IPv4 interface%s%s is up\n", want ? " " : "",
			     want ? want : "");
	return ret;
}

static int urel_fi_resolve(const char *node, const char *service, struct sockaddr_storage *ss,
			   socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res;
	int ret;

	ret = getaddrinfo(node, service ? service : "0", &hints, &res);
	if (ret) {
		UREL_FI_WARN(FI_LOG_FABRIC, "cannot resolve %s:%s: %s\n", node ? node : "",
			     service ? service : "", gai_strerror(ret));
		return -FI_ENODATA;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static bool urel_fi_addr_format_ok(uint32_t fmt, int family)
{
	return fmt == FI_FORMAT_UNSPEC || fmt == FI_SOCKADDR ||
	       (fmt == FI_SOCKADDR_IN && family == AF_INET) ||
	       (fmt == FI_SOCKADDR_IN6 && family == AF_INET6);
}

#define UREL_FI_REJECT(...)                                                                        \
	do {                                                                                       \
		UREL_FI_INFO(FI_LOG_CORE, "hints refused: " __VA_ARGS__);                          \
		return false;                                                                      \
	} while (0)

/*
 * RMA and atomics need an application that takes provider keys and
 * allocated memory (API 1.5 mode bits; FI_MR_BASIC would want virtual
 * addresses, FI_MR_SCALABLE its own keys). No hints: our mode.
 */
static bool urel_fi_rma_mr_ok(const struct fi_info *h)
{
	uint64_t want = UREL_FI_MR_MODE;

	if (!h || !h->domain_attr)
		return true;
	return (h->domain_attr->mr_mode & want) == want &&
	       !(h->domain_attr->mr_mode & (FI_MR_BASIC | FI_MR_SCALABLE));
}

/* Does @h ask for nothing beyond what the provider does? */
static bool urel_fi_hints_ok(const struct fi_info *h)
{
	const struct fi_domain_attr *d = h->domain_attr;
	const struct fi_ep_attr *e = h->ep_attr;

	if ((h->caps & UREL_FI_RMA_PRIMARY) && !urel_fi_rma_mr_ok(h))
		UREL_FI_REJECT("RMA or atomics with mr_mode %#x (needs FI_MR_ALLOCATED and "
			       "FI_MR_PROV_KEY)\n",
			       h->domain_attr->mr_mode);
	if (h->caps & ~UREL_FI_CAPS)
		UREL_FI_REJECT("caps %#llx unsupported\n",
			       (unsigned long long)(h->caps & ~UREL_FI_CAPS));
	if (h->fabric_attr) {
		if (h->fabric_attr->prov_name && strcmp(h->fabric_attr->prov_name, UREL_FI_NAME))
			UREL_FI_REJECT("provider %s\n", h->fabric_attr->prov_name);
		if (h->fabric_attr->name && strcmp(h->fabric_attr->name, UREL_FI_NAME))
			UREL_FI_REJECT("fabric %s\n", h->fabric_attr->name);
	}
	if (e) {
		if (e->type != FI_EP_UNSPEC && e->type != FI_EP_RDM)
			UREL_FI_REJECT("endpoint type %d (RDM only)\n", e->type);
		if (e->max_msg_size > urel_fi_max_msg_size())
			UREL_FI_REJECT("max_msg_size %zu\n", e->max_msg_size);
		if (e->msg_prefix_size)
			UREL_FI_REJECT("message prefix\n");
		if (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1)
			UREL_FI_REJECT("scalable endpoints\n");
	}
	if (d) {
		if (d->name && strcmp(d->name, UREL_FI_NAME))
			UREL_FI_REJECT("domain %s\n", d->name);
		if (d->control_progress == FI_PROGRESS_AUTO || d->data_progress == FI_PROGRESS_AUTO)
			UREL_FI_REJECT("automatic progress (manual only)\n");
		if (d->cq_data_size > UREL_FI_CQ_DATA_SIZE)
			UREL_FI_REJECT("cq_data_size %zu\n", d->cq_data_size);
		if (d->caps & ~(FI_LOCAL_COMM | FI_REMOTE_COMM))
			UREL_FI_REJECT("domain caps\n");
		if (!urel_fi_threading_ok(d->threading))
			UREL_FI_REJECT("threading %d\n", (int)d->threading);
	}
	if (h->tx_attr) {
		if (h->tx_attr->caps & ~UREL_FI_CAPS)
			UREL_FI_REJECT("tx caps\n");
		if (h->tx_attr->msg_order & ~UREL_FI_MSG_ORDER)
			UREL_FI_REJECT("tx msg_order %#llx\n",
				       (unsigned long long)h->tx_attr->msg_order);
		if (h->tx_attr->inject_size > UREL_FI_INJECT_SIZE)
			UREL_FI_REJECT("inject_size %zu\n", h->tx_attr->inject_size);
		if (h->tx_attr->iov_limit > UREL_FI_IOV_LIMIT)
			UREL_FI_REJECT("tx iov_limit %zu\n", h->tx_attr->iov_limit);
		if (h->tx_attr->rma_iov_limit > UREL_FI_IOV_LIMIT)
			UREL_FI_REJECT("rma_iov_limit %zu\n", h->tx_attr->rma_iov_limit);
		if (h->tx_attr->size > UREL_FI_QUEUE_SIZE)
			UREL_FI_REJECT("tx size %zu\n", h->tx_attr->size);
	}
	if (h->rx_attr) {
		if (h->rx_attr->caps & ~UREL_FI_CAPS)
			UREL_FI_REJECT("rx caps\n");
		if (h->rx_attr->msg_order & ~UREL_FI_MSG_ORDER)
			UREL_FI_REJECT("rx msg_order\n");
		if (h->rx_attr->iov_limit > UREL_FI_IOV_LIMIT)
			UREL_FI_REJECT("rx iov_limit %zu\n", h->rx_attr->iov_limit);
		if (h->rx_attr->size > UREL_FI_QUEUE_SIZE)
			UREL_FI_REJECT("rx size %zu\n", h->rx_attr->size);
		if (h->rx_attr->total_buffered_recv)
			UREL_FI_REJECT("total_buffered_recv\n");
	}
	return true;
}

static int urel_fi_fill(struct fi_info *fi, const struct fi_info *h, uint32_t version)
{
	uint64_t caps = h && h->caps ? h->caps : UREL_FI_CAPS;
	bool rma;

	/* No caps asked: RMA only where the application's MR modes allow it. */
	if ((!h || !h->caps) && !urel_fi_rma_mr_ok(h))
		caps &= ~(UREL_FI_RMA_PRIMARY | UREL_FI_RMA_SECONDARY);
	/* Asked only for primary caps: add the secondary ones we always have. */
	caps |= FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_REMOTE_CQ_DATA;
	if (!(caps & (FI_MSG | FI_TAGGED | UREL_FI_RMA_PRIMARY)))
		caps |= FI_MSG | FI_TAGGED;
	rma = caps & UREL_FI_RMA_PRIMARY;
	/* RMA or atomics with no direction named: every direction. */
	if (rma && !(caps & UREL_FI_RMA_SECONDARY))
		caps |= UREL_FI_RMA_SECONDARY;
	if (!rma)
		caps &= ~UREL_FI_RMA_SECONDARY;
	if (h && h->caps && !(h->caps & FI_DIRECTED_RECV))
		caps &= ~FI_DIRECTED_RECV;
	if (h && h->caps && !(h->caps & FI_SOURCE))
		caps &= ~FI_SOURCE;
	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = fi->src_addr && ((struct sockaddr *)fi->src_addr)->sa_family == AF_INET6
				  ? FI_SOCKADDR_IN6
				  : FI_SOCKADDR_IN;

	fi->tx_attr->caps =
		caps & ~(FI_RECV | FI_DIRECTED_RECV | FI_SOURCE | FI_REMOTE_READ | FI_REMOTE_WRITE);
	fi->tx_attr->mode = 0;
	fi->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags : 0;
	fi->tx_attr->msg_order = UREL_FI_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = UREL_FI_INJECT_SIZE;
	fi->tx_attr->size = UREL_FI_QUEUE_SIZE;
	/* Several iovs cost a copy (iov.c). */
	fi->tx_attr->iov_limit = UREL_FI_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = rma ? UREL_FI_IOV_LIMIT : 0;

	fi->rx_attr->caps = caps & ~(FI_SEND | FI_READ | FI_WRITE);
	fi->rx_attr->mode = 0;
	fi->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags : 0;
	fi->rx_attr->msg_order = fi->tx_attr->msg_order;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = UREL_FI_QUEUE_SIZE;
	fi->rx_attr->iov_limit = UREL_FI_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = urel_fi_max_msg_size();
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->max_order_raw_size = 0;
	fi->ep_attr->max_order_war_size = 0;
	fi->ep_attr->max_order_waw_size = 0;
	/* With untagged messages or write notices in the same context the top match bit is ours. */
	fi->ep_attr->mem_tag_format =
		UREL_FI_RESERVES_TOP_BIT(caps) ? ~UREL_FI_UNTAGGED_BIT : ~0ULL;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(UREL_FI_NAME);
	/* The level asked for is the one given (domain.c skips the locks it makes unnecessary). */
	fi->domain_attr->threading = h && h->domain_attr && h->domain_attr->threading
					     ? h->domain_attr->threading
					     : urel_fi_default_threading();
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = h && h->domain_attr ? h->domain_attr->av_type : FI_AV_UNSPEC;
	/* Messages need no registration; RMA needs it, with our keys. */
	fi->domain_attr->mr_mode = rma ? UREL_FI_MR_MODE : 0;
	fi->domain_attr->mr_key_size = rma ? sizeof(uint64_t) : 0;
	fi->domain_attr->cq_data_size = UREL_FI_CQ_DATA_SIZE;
	fi->domain_attr->cq_cnt = 256;
	fi->domain_attr->ep_cnt = 256;
	fi->domain_attr->tx_ctx_cnt = 256;
	fi->domain_attr->rx_ctx_cnt = 256;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->max_ep_stx_ctx = 0;
	fi->domain_attr->max_ep_srx_ctx = 0;
	fi->domain_attr->cntr_cnt = 0;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	fi->domain_attr->mode = 0;
	fi->domain_attr->max_err_data = 0;
	fi->domain_attr->mr_cnt = 0;

	fi->fabric_attr->name = strdup(UREL_FI_NAME);
	fi->fabric_attr->prov_name = NULL; /* libfabric fills it in */
	fi->fabric_attr->prov_version = UREL_FI_VERSION;
	fi->fabric_attr->api_version = version;
	if (!fi->domain_attr->name || !fi->fabric_attr->name)
		return -FI_ENOMEM;
	return 0;
}

static int urel_fi_copy_addr(void **dst, size_t *dstlen, const struct sockaddr_storage *ss,
			     socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return -FI_ENOMEM;
	memcpy(*dst, ss, len);
	*dstlen = len;
	return 0;
}

static int urel_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
			   const struct fi_info *hints, struct fi_info **info)
{
	struct sockaddr_storage src, dst;
	socklen_t srclen = 0, dstlen = 0;
	struct fi_info *fi;
	int ret;

	*info = NULL;
	if (hints && !urel_fi_hints_ok(hints))
		return -FI_ENODATA;
	if (hints && hints->src_addr) {
		if (hints->src_addrlen > sizeof(src))
			return -FI_ENODATA;
		memcpy(&src, hints->src_addr, hints->src_addrlen);
		srclen = hints->src_addrlen;
	}
	if (node || service) {
		if (flags & FI_SOURCE) {
			ret = urel_fi_resolve(node, service, &src, &srclen);
		} else {
			ret = node ? urel_fi_resolve(node, service, &dst, &dstlen) : 0;
			if (!node && service && !srclen) {
				/* A service alone names our own port. */
				ret = urel_fi_default_src(&src, &srclen);
				if (!ret)
					ret = urel_fi_resolve(NULL, service, &dst, &dstlen);
				if (!ret) {
					((struct sockaddr_in *)&src)->sin_port =
						((struct sockaddr_in *)&dst)->sin_port;
					dstlen = 0;
				}
			}
		}
		if (ret)
			return ret;
	}
	if (!srclen) {
		ret = urel_fi_default_src(&src, &srclen);
		if (ret)
			return ret;
	}
	if (src.ss_family != AF_INET && src.ss_family != AF_INET6)
		return -FI_ENODATA;
	if (dstlen && dst.ss_family != src.ss_family)
		return -FI_ENODATA;
	if (hints && !urel_fi_addr_format_ok(hints->addr_format, src.ss_family)) {
		UREL_FI_INFO(FI_LOG_CORE, "hints refused: address format %u\n", hints->addr_format);
		return -FI_ENODATA;
	}

	fi = fi_allocinfo();
	if (!fi)
		return -FI_ENOMEM;
	ret = urel_fi_copy_addr(&fi->src_addr, &fi->src_addrlen, &src, srclen);
	if (!ret && dstlen)
		ret = urel_fi_copy_addr(&fi->dest_addr, &fi->dest_addrlen, &dst, dstlen);
	if (!ret)
		ret = urel_fi_fill(fi, hints, version);
	if (ret) {
		fi_freeinfo(fi);
		return ret;
	}
	*info = fi;
	return 0;
}

static void urel_fi_cleanup(void)
{
}

struct fi_provider urel_fi_prov = {
	.name = UREL_FI_NAME,
	.version = UREL_FI_VERSION,
	.fi_version = UREL_FI_API,
	.getinfo = urel_fi_getinfo,
	.fabric = urel_fi_fabric_open,
	.cleanup = urel_fi_cleanup,
};

__attribute__((visibility("default"))) struct fi_provider *fi_prov_ini(void);
__attribute__((visibility("default"))) struct fi_provider *fi_prov_ini(void)
{
	fi_param_define(&urel_fi_prov, "iface", FI_PARAM_STRING,
			"Network interface whose IPv4 address endpoints bind (default: the first "
			"one up that is not loopback)");
	fi_param_define(&urel_fi_prov, "threading", FI_PARAM_STRING,
			"Threading level when the application's hints leave it unspecified: safe "
			"(default), fid, domain, completion or endpoint (fi_domain(3))");
	return &urel_fi_prov;
}
