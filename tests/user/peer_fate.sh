#!/bin/sh
# In-VM test: vm_peer_fate with a small retry limit, so that a dead peer is
# declared within a fraction of a second (3 timeouts of at most 20 ms).
set -u
insmod "$USNIC_REL_KO" retry_limit=3 rto_min_us=1000 rto_max_us=20000 || exit 1
"$USNIC_REL_BUILD/tests/vm_peer_fate"
rc=$?
rmmod usnic_rel || rc=1
exit $rc
