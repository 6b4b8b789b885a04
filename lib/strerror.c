// SPDX-License-Identifier: MIT
/*
 * libusnicrel: messages for the error codes the library returns, saying what
 * to do where there is something to do.
 */
#include <errno.h>
#include <string.h>

#include <usnicrel.h>

#include "internal.h"

UREL_API const char *urel_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case ENOENT:
		return "no usnic_rel device node: load the module (modprobe usnic_rel) or set "
		       "USNIC_REL_DEVICE";
	case ENOTTY:
		return "not a usnic_rel device";
	case EPROTO:
		return "the usnic_rel module and libusnicrel speak different ABI versions: install "
		       "matching builds";
	case EACCES:
		return "permission denied: opening the usnic_rel device node (not in its group, "
		       "see "
		       "usnic_rel(4)), or binding an endpoint to a privileged port (below 1024) "
		       "without CAP_NET_BIND_SERVICE";
	case EAGAIN:
		return "send queue full: poll completions (urel_ep_poll_cq, urel_ep_progress) and "
		       "retry";
	case ENOBUFS:
		return "send staging area full: poll completions to free it and retry, or create "
		       "the "
		       "endpoint with a larger staging_size";
	case EMSGSIZE:
		return "message larger than the channel allows (max_msg in urel_ep_query)";
	case ENXIO:
		return "no such peer in the endpoint's address vector";
	case EEXIST:
		return "address already in the endpoint's address vector";
	case EAFNOSUPPORT:
		return "address family not supported: AF_INET or AF_INET6, the endpoint's own "
		       "family "
		       "for peers";
	case EADDRINUSE:
		return "local address and port already bound by another endpoint or socket";
	case EADDRNOTAVAIL:
		return "local address not configured on any interface of this network namespace";
	case EOPNOTSUPP:
		return "operation not supported by this usnic_rel module (one-sided RDMA needs a "
		       "newer module)";
	case ESHUTDOWN:
		return "the endpoint no longer exists in the kernel: destroy it";
	case EIO:
		return "the endpoint's shared rings are corrupt and the kernel stopped using them: "
		       "destroy it";
	case ENOSPC:
		return "address vector full";
	case ENOMEM:
		return "out of memory (memory registrations also count against RLIMIT_MEMLOCK, "
		       "see ulimit -l)";
	case ETIMEDOUT:
		return "peer unreachable: retransmissions exhausted";
	case EHOSTUNREACH:
		return "peer declared dead earlier: remove it from the address vector and insert "
		       "it "
		       "again to retry";
	case ECONNRESET:
		return "peer restarted (new incarnation): operations in flight to it were lost";
	case ECANCELED:
		return "peer removed from the address vector with the operation outstanding";
	case ENOKEY:
		return "the target has no memory registration with this rkey (deregistered, or a "
		       "wrong key)";
	case ERANGE:
		return "remote range outside the target's memory registration";
	case EPERM:
		return "the target's memory registration does not allow this access "
		       "(UREL_ACCESS_REMOTE_READ, _WRITE, _ATOMIC)";
	case EBADFD:
		return "window call not allowed in the window's synchronisation state (no epoch, "
		       "target not locked or not in the access group, nested or unmatched call)";
	case EFAULT:
		return "no single attached region of the dynamic window holds the target range";
	case EMEDIUMTYPE:
		return "not supported by this window's flavor (attach and detach: dynamic windows "
		       "only)";
	case EDOM:
		return "operation undefined on this datatype (compare-and-swap and bitwise or "
		       "logical accumulates need an integer type)";
	case EHOSTDOWN:
		return "a rank the window call waits on died (its process is gone)";
	default:
		return strerror(err);
	}
}
