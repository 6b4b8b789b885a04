#!/bin/bash
# In-VM test: deep reordering on lo (netem sends half the packets at once and
# holds the others back) makes the receiving window hold packets far ahead
# of the next one expected, so its slots must grow under load; every message
# still arrives once and in order, and the windows are freed afterwards.
# Usage: peercost_reorder.sh [COUNT]
set -uo pipefail
count=${1:-3000}
tc qdisc del dev lo root 2>/dev/null
tc qdisc add dev lo root netem delay 30ms reorder 50% || {
	echo "FAIL netem setup"
	exit 1
}
"$USNIC_REL_BUILD/tests/vm_peercost" reorder "$count"
rc=$?
tc qdisc del dev lo root
exit $rc
