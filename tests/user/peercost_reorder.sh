#!/bin/bash
# In-VM test: deep reordering on lo (netem sends half the packets at once and
# holds the others back) makes the receiving window hold packets far ahead
# of the next one expected, so its slots must grow under load; every message
# still arrives once and in order, and the windows are freed afterwards.
# Then again with the first 20 growths of the receive window failing as if
# memory ran out: exactly those packets are dropped unacknowledged, come
# again, and the window grows after them.
# Usage: peercost_reorder.sh [COUNT]
set -uo pipefail
count=${1:-3000}
status=0
tc qdisc del dev lo root 2>/dev/null
tc qdisc add dev lo root netem delay 100ms reorder 50% || {
	echo "FAIL netem setup"
	exit 1
}
"$USNIC_REL_BUILD/tests/vm_peercost" reorder "$count" || status=1
VM_PEERCOST_WINDOW_NOMEM=20 "$USNIC_REL_BUILD/tests/vm_peercost" reorder "$count" || status=1
tc qdisc del dev lo root
exit $status
