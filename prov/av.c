// SPDX-License-Identifier: MIT
/*
 * urel provider: the address vector. fi_addr_t is the index of an address in
 * the AV, for FI_AV_TABLE and FI_AV_MAP alike; every endpoint bound to the AV
 * gets each address in its own usnic_rel address vector at once, so that a
 * peer can reach us before we ever send to it.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urel_fi.h"

static socklen_t urel_fi_sockaddr_len(const void *addr)
{
	switch (((const struct sockaddr *)addr)->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

static int urel_fi_av_grow(struct urel_fi_av *av, size_t want)
{
	struct urel_fi_av_entry *grown;
	size_t cap = av->cap ? av->cap : 64;

	if (want <= av->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	grown = realloc(av->ent, cap * sizeof(*grown));
	if (!grown)
		return -FI_ENOMEM;
	av->ent = grown;
	av->cap = cap;
	return 0;
}

static int urel_fi_av_insert(struct fid_av *fid, const void *addr, size_t count, fi_addr_t *fi_addr,
			     uint64_t flags, void *context)
{
	struct urel_fi_av *av = container_of(fid, struct urel_fi_av, fid);
	const unsigned char *p = addr;
	int done = 0;

	(void)context;
	if (flags & ~(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&av->lock);
	if (urel_fi_av_grow(av, av->n + count)) {
		pthread_mutex_unlock(&av->lock);
		return -FI_ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		/* Addresses are packed at the stride of this domain's own. */
		socklen_t len = urel_fi_sockaddr_len(p);
		struct urel_fi_av_entry *e = &av->ent[av->n];
		fi_addr_t a = av->n;
		bool ok = len && ((const struct sockaddr *)p)->sa_family == av->dom->src.ss_family;

		if (ok) {
			memset(e, 0, sizeof(*e));
			memcpy(&e->addr, p, len);
			e->len = len;
			e->live = true;
			av->n++;
			for (size_t j = 0; j < av->neps; j++) {
				if (urel_fi_ep_add_peer(av->eps[j], a, (struct sockaddr *)&e->addr,
							len))
					ok = false;
			}
		} else {
			UREL_FI_WARN(FI_LOG_AV, "address %zu is not of this domain's family\n", i);
		}
		if (fi_addr)
			fi_addr[i] = ok ? a : FI_ADDR_NOTAVAIL;
		done += ok;
		p += urel_fi_sockaddr_len(&av->dom->src);
	}
	pthread_mutex_unlock(&av->lock);
	return done;
}

static int urel_fi_av_insertsvc(struct fid_av *fid, const char *node, const char *service,
				fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)fid, (void)node, (void)service, (void)fi_addr, (void)flags, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_av_insertsym(struct fid_av *fid, const char *node, size_t nodecnt,
				const char *service, size_t svccnt, fi_addr_t *fi_addr,
				uint64_t flags, void *context)
{
	(void)fid, (void)node, (void)nodecnt, (void)service, (void)svccnt, (void)fi_addr;
	(void)flags, (void)context;
	return -FI_ENOSYS;
}

static int urel_fi_av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct urel_fi_av *av = container_of(fid, struct urel_fi_av, fid);
	int ret = 0;

	(void)flags;
	pthread_mutex_lock(&av->lock);
	for (size_t i = 0; i < count; i++) {
		if (fi_addr[i] >= av->n || !av->ent[fi_addr[i]].live) {
			ret = -FI_EINVAL;
			continue;
		}
		av->ent[fi_addr[i]].live = false;
		for (size_t j = 0; j < av->neps; j++)
			urel_fi_ep_del_peer(av->eps[j], fi_addr[i]);
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

static int urel_fi_av_lookup(struct fid_av *fid, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct urel_fi_av *av = container_of(fid, struct urel_fi_av, fid);
	int ret = 0;

	pthread_mutex_lock(&av->lock);
	if (fi_addr >= av->n || !av->ent[fi_addr].live) {
		ret = -FI_ENOENT;
	} else {
		size_t len = av->ent[fi_addr].len;

		memcpy(addr, &av->ent[fi_addr].addr, *addrlen < len ? *addrlen : len);
		*addrlen = len;
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

static const char *urel_fi_av_straddr(struct fid_av *fid, const void *addr, char *buf, size_t *len)
{
	const struct sockaddr *sa = addr;
	char host[INET6_ADDRSTRLEN] = "?";
	char tmp[INET6_ADDRSTRLEN + 16];
	unsigned int port = 0;
	int n;

	(void)fid;
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
			  sizeof(host));
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	}
	n = snprintf(tmp, sizeof(tmp), "urel://%s:%u", host, port);
	if (buf && *len) {
		strncpy(buf, tmp, *len - 1);
		buf[*len - 1] = '\0';
	}
	*len = (size_t)n + 1;
	return buf;
}

static int urel_fi_av_close(struct fid *fid)
{
	struct urel_fi_av *av = container_of(fid, struct urel_fi_av, fid.fid);

	if (av->neps)
		return -FI_EBUSY;
	pthread_mutex_destroy(&av->lock);
	free(av->ent);
	free(av->eps);
	free(av);
	return 0;
}

static struct fi_ops urel_fi_av_fid_ops = {
	.size = sizeof(struct fi_ops),
	.close = urel_fi_av_close,
	.bind = urel_fi_no_bind,
	.control = urel_fi_no_control,
	.ops_open = urel_fi_no_ops_open,
};

static struct fi_ops_av urel_fi_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = urel_fi_av_insert,
	.insertsvc = urel_fi_av_insertsvc,
	.insertsym = urel_fi_av_insertsym,
	.remove = urel_fi_av_remove,
	.lookup = urel_fi_av_lookup,
	.straddr = urel_fi_av_straddr,
};

int urel_fi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **avp,
		    void *context)
{
	struct urel_fi_domain *d = container_of(domain, struct urel_fi_domain, fid);
	struct urel_fi_av *av;

	if (!attr || attr->flags & ~FI_SYMMETRIC || attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE && attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->dom = d;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	pthread_mutex_init(&av->lock, NULL);
	if (attr->count && urel_fi_av_grow(av, attr->count)) {
		free(av);
		return -FI_ENOMEM;
	}
	av->fid.fid.fclass = FI_CLASS_AV;
	av->fid.fid.context = context;
	av->fid.fid.ops = &urel_fi_av_fid_ops;
	av->fid.ops = &urel_fi_av_ops;
	*avp = &av->fid;
	return 0;
}

/* Give @ep every address already in @av. */
int urel_fi_av_bind_ep(struct urel_fi_av *av, struct urel_fi_ep *ep)
{
	struct urel_fi_ep **grown;
	int ret = 0;

	pthread_mutex_lock(&av->lock);
	grown = realloc(av->eps, (av->neps + 1) * sizeof(*grown));
	if (!grown) {
		pthread_mutex_unlock(&av->lock);
		return -FI_ENOMEM;
	}
	av->eps = grown;
	av->eps[av->neps++] = ep;
	for (size_t i = 0; i < av->n && !ret; i++) {
		if (av->ent[i].live)
			ret = urel_fi_ep_add_peer(ep, i, (struct sockaddr *)&av->ent[i].addr,
						  av->ent[i].len);
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

void urel_fi_av_unbind_ep(struct urel_fi_av *av, struct urel_fi_ep *ep)
{
	pthread_mutex_lock(&av->lock);
	for (size_t i = 0; i < av->neps; i++) {
		if (av->eps[i] == ep) {
			av->eps[i] = av->eps[--av->neps];
			break;
		}
	}
	pthread_mutex_unlock(&av->lock);
}
