/* SPDX-License-Identifier: MIT */
/*
 * The check of the MPI test programs: a failed condition names the rank and
 * the place and aborts the whole job. The program defines `rank`.
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: ", rank, __func__, __LINE__);             \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			MPI_Abort(MPI_COMM_WORLD, 1);                                              \
		}                                                                                  \
	} while (0)

#endif
