/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: a job (boot.c) as groups (group.c) see it.
 */
#ifndef UREL_JOB_H
#define UREL_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include <usnicrel_msg.h>

struct urel_job {
	struct urel_msg *m;
	int rank, size;
	urel_peer_t *peers; /* by rank; 0 for ourselves */
	bool pmix; /* PMIx_Finalize at the end */
	uint32_t next_ctx; /* the lowest context id no group of ours uses */
};

#endif /* UREL_JOB_H */
