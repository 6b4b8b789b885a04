// SPDX-License-Identifier: MIT
/*
 * libusnicrel: bootstrapping a job. Either the caller knows every rank's
 * address (tests, examples, its own launcher), or PMIx tells it: the
 * launcher's PMIx server (Open MPI's mpirun, Slurm's srun --mpi=pmix) gives
 * rank and size, each rank puts its endpoint's address, a fence collecting
 * the data makes all of them visible, and each rank gets the others'.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#ifdef UREL_HAVE_PMIX
#include <pmix.h>
#endif

#include "internal.h"
#include "job.h"
#include "msg/msg.h"

/* Far more than any launcher here starts; bounds the address table. */
#define UREL_JOB_MAX_SIZE (1 << 20)

static int urel_job_new(struct urel_msg *m, int rank, int size, struct urel_job **jp)
{
	struct urel_job *j;

	if (!m || !jp || size < 1 || size > UREL_JOB_MAX_SIZE || rank < 0 || rank >= size)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->peers = calloc((size_t)size, sizeof(*j->peers));
	if (!j->peers) {
		free(j);
		return -ENOMEM;
	}
	j->m = m;
	j->rank = rank;
	j->size = size;
	j->next_ctx = 2; /* 0 is never used, 1 is the world */
	*jp = j;
	return 0;
}

static void urel_job_free(struct urel_job *j)
{
	/* Removing a peer cancels what is still on its way: let the last messages land. */
	urel_msg_drain(j->m);
	for (int r = 0; r < j->size; r++) {
		if (j->peers[r])
			urel_av_remove(j->m->ep, j->peers[r]);
	}
	free(j->peers);
	free(j);
}

static socklen_t urel_job_addrlen(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static int urel_job_insert(struct urel_job *j, int r, const struct sockaddr_storage *ss)
{
	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
		return -EINVAL;
	return urel_av_insert(j->m->ep, (const struct sockaddr *)ss, urel_job_addrlen(ss),
			      &j->peers[r]);
}

UREL_API int urel_job_init(struct urel_msg *m, int rank, int size,
			   const struct sockaddr_storage *addrs, struct urel_job **jp)
{
	struct urel_job *j;
	int ret;

	if (!addrs)
		return -EINVAL;
	ret = urel_job_new(m, rank, size, &j);
	if (ret)
		return ret;
	for (int r = 0; r < size; r++) {
		if (r == rank)
			continue;
		ret = urel_job_insert(j, r, &addrs[r]);
		if (ret) {
			urel_job_free(j);
			return ret;
		}
	}
	*jp = j;
	return 0;
}

#ifdef UREL_HAVE_PMIX
#define UREL_PMIX_KEY "usnicrel.addr"

static int urel_pmix_err(pmix_status_t st)
{
	return st == PMIX_ERR_NOT_FOUND ? -ENOENT : st == PMIX_ERR_TIMEOUT ? -ETIMEDOUT : -EIO;
}

static int urel_job_pmix_exchange(struct urel_job *j, const pmix_proc_t *me,
				  const struct sockaddr_storage *mine)
{
	pmix_value_t v, *val = NULL;
	pmix_info_t info;
	bool collect = true;
	pmix_status_t st;
	pmix_proc_t p;
	int ret;

	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)mine;
	v.data.bo.size = sizeof(*mine);
	st = PMIx_Put(PMIX_GLOBAL, UREL_PMIX_KEY, &v);
	if (st == PMIX_SUCCESS)
		st = PMIx_Commit();
	if (st != PMIX_SUCCESS)
		return urel_pmix_err(st);
	PMIX_INFO_CONSTRUCT(&info);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	st = PMIx_Fence(NULL, 0, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	if (st != PMIX_SUCCESS)
		return urel_pmix_err(st);
	for (int r = 0; r < j->size; r++) {
		struct sockaddr_storage ss;

		if (r == j->rank)
			continue;
		PMIX_PROC_CONSTRUCT(&p);
		PMIX_LOAD_PROCID(&p, me->nspace, (pmix_rank_t)r);
		st = PMIx_Get(&p, UREL_PMIX_KEY, NULL, 0, &val);
		if (st != PMIX_SUCCESS)
			return urel_pmix_err(st);
		/* A peer's value is not trusted: it must be exactly an address. */
		if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != sizeof(ss)) {
			PMIX_VALUE_RELEASE(val);
			return -EPROTO;
		}
		memcpy(&ss, val->data.bo.bytes, sizeof(ss));
		PMIX_VALUE_RELEASE(val);
		ret = urel_job_insert(j, r, &ss);
		if (ret)
			return ret;
	}
	return 0;
}

UREL_API int urel_job_init_pmix(struct urel_msg *m, struct urel_job **jp)
{
	struct urel_ep_info info;
	pmix_value_t *val = NULL;
	struct urel_job *j;
	pmix_status_t st;
	pmix_proc_t me, wild;
	uint32_t size;
	int ret;

	if (!m || !jp)
		return -EINVAL;
	ret = urel_ep_query(m->ep, &info);
	if (ret)
		return ret;
	/* Without a server to talk to, PMIx_Init fails: not a PMIx job. */
	if (!getenv("PMIX_NAMESPACE") && !getenv("PMIX_SERVER_URI41") &&
	    !getenv("PMIX_SERVER_URI4") && !getenv("PMIX_SERVER_URI3") &&
	    !getenv("PMIX_SERVER_URI2"))
		return -ENOENT;
	st = PMIx_Init(&me, NULL, 0);
	if (st != PMIX_SUCCESS)
		return -ENOENT;
	PMIX_PROC_CONSTRUCT(&wild);
	PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
	st = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
	if (st != PMIX_SUCCESS || val->type != PMIX_UINT32) {
		if (st == PMIX_SUCCESS)
			PMIX_VALUE_RELEASE(val);
		ret = st == PMIX_SUCCESS ? -EPROTO : urel_pmix_err(st);
		goto err_fini;
	}
	size = val->data.uint32;
	PMIX_VALUE_RELEASE(val);
	if (size > UREL_JOB_MAX_SIZE || me.rank >= size) {
		ret = -EPROTO;
		goto err_fini;
	}
	ret = urel_job_new(m, (int)me.rank, (int)size, &j);
	if (ret)
		goto err_fini;
	j->pmix = true;
	ret = urel_job_pmix_exchange(j, &me, &info.addr);
	if (ret) {
		urel_job_free(j);
		goto err_fini;
	}
	*jp = j;
	return 0;
err_fini:
	PMIx_Finalize(NULL, 0);
	return ret;
}
#else
UREL_API int urel_job_init_pmix(struct urel_msg *m, struct urel_job **jp)
{
	(void)m;
	(void)jp;
	return -ENOSYS;
}
#endif

UREL_API int urel_job_fini(struct urel_job *j)
{
	bool pmix;

	if (!j)
		return 0;
	pmix = j->pmix;
	urel_job_free(j);
#ifdef UREL_HAVE_PMIX
	if (pmix)
		PMIx_Finalize(NULL, 0);
#else
	(void)pmix;
#endif
	return 0;
}

UREL_API int urel_job_rank(const struct urel_job *j)
{
	return j ? j->rank : -EINVAL;
}

UREL_API int urel_job_size(const struct urel_job *j)
{
	return j ? j->size : -EINVAL;
}

UREL_API urel_peer_t urel_job_peer(const struct urel_job *j, int rank)
{
	if (!j || rank < 0 || rank >= j->size)
		return 0;
	return j->peers[rank];
}
