/*
 * LD_PRELOAD shim for Debian's NPopenmpi2 (NetPIPE 3.7, one-sided): it passes
 * NULL where MPI_Win_create() takes an MPI_Info, which Open MPI (whose
 * MPI_INFO_NULL is not a null pointer) refuses with MPI_ERR_INFO, or crashes
 * on with parameter checks off. Through the MPI profiling interface, a null
 * info becomes MPI_INFO_NULL; every other call is untouched.
 */
#include <mpi.h>

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
		   MPI_Win *win)
{
	return PMPI_Win_create(base, size, disp_unit, info ? info : MPI_INFO_NULL, comm, win);
}
