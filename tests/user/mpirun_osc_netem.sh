#!/bin/bash
# In-VM test: the one-sided conformance run of mpirun_osc.sh (3 ranks, and
# its lazy-lock, example and passive-target cases) with 5 % of the packets
# on lo lost both ways by netem: every result must still be exact.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
trap 'tc qdisc del dev lo root 2>/dev/null' EXIT
tc qdisc del dev lo root 2>/dev/null
tc qdisc add dev lo root netem loss 5% || {
	echo "FAIL: netem on lo"
	exit 1
}
echo "netem on lo: loss 5%"
"$here/mpirun_osc.sh" "3 3"
