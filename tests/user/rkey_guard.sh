#!/bin/bash
# In-VM test (loads the module itself): vm_rkey's key checks, then DEREG_MR
# while a 1 MiB GET is being answered. A 32-packet send window makes the
# answer stall, unacknowledged, after one window while the target drops what
# it sends; retry_limit 64 and stall_timeout_ms 600000 keep either side from being
# declared dead meanwhile. Then DEREG_MR racing PUTs and GETs in flight.
set -uo pipefail
bin=$USNIC_REL_BUILD/tests/vm_rkey
status=0

insmod "$USNIC_REL_KO" send_window=32 ack_every=16 retry_limit=64 stall_timeout_ms=600000 || exit 1
"$bin" keys || status=1
"$bin" dereg || status=1
"$bin" flood || status=1
rmmod usnic_rel || { echo "rkey_guard: rmmod usnic_rel failed"; status=1; }
exit $status
