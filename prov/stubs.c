// SPDX-License-Identifier: MIT
/* urel provider: the answers to what an object does not do. */
#include "urel_fi.h"

int urel_fi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)bfid, (void)flags;
	return -FI_ENOSYS;
}

int urel_fi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)command, (void)arg;
	return -FI_ENOSYS;
}

int urel_fi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_ENOSYS;
}
