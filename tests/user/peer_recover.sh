#!/bin/sh
# In-VM test: vm_recover's three cases, each with the module parameters it
# needs: AV_REMOVE + AV_INSERT of a live peer (defaults), a dead peer that
# comes back (a small retry limit, as in peer_fate.sh), and a peer that
# acknowledges one packet per RTO (a short stall_timeout_ms and an RTO
# capped at 200 ms, so that without the stall bound every send would
# complete within seconds).
set -u
bin=$USNIC_REL_BUILD/tests/vm_recover
rc=0
run() {
	what=$1
	shift
	insmod "$USNIC_REL_KO" "$@" || return 1
	"$bin" "$what" || rc=1
	rmmod usnic_rel || rc=1
}
run reinsert || rc=1
run dead retry_limit=3 rto_min_us=1000 rto_max_us=20000 || rc=1
run stall rto_min_us=20000 rto_max_us=200000 stall_timeout_ms=1000 || rc=1
exit $rc
