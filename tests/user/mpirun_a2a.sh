#!/bin/bash
# In-VM test: jobs of tests/user/mpi_msg_a2a.c under Open MPI's mpirun
# (PMIx bootstrap). Usage: mpirun_a2a.sh quick|full
#   quick (both kernels): 4 ranks, all-to-all 0 B..100000 B and a wildcard storm;
#   full (stock kernel):  4 and 8 ranks, all-to-all 0 B..4 MiB, storms, the
#                         storm and all-to-all again under 5 % netem loss and
#                         under netem reordering, and 64 MiB there and back.
# Every rank checks every byte and each sender's order; mpirun fails if one does.
set -uo pipefail
mode=${1:-quick}
prog=${USNIC_REL_BUILD:?}/tests/mpi_msg_a2a
here=$(cd "$(dirname "$0")" && pwd)
export HOME=/tmp OMPI_MCA_plm_rsh_agent=false
export LSAN_OPTIONS=suppressions=$here/lsan-pmix.supp:print_suppressions=0
fails=0
run() {
	local np=$1 out
	shift
	echo "mpirun -np $np mpi_msg_a2a $*"
	if ! out=$(timeout 400 mpirun --allow-run-as-root --oversubscribe -np "$np" "$prog" "$@" 2>&1); then
		echo "$out"
		echo "FAIL: mpirun -np $np mpi_msg_a2a $*"
		fails=$((fails + 1))
		return
	fi
	echo "$out" | grep -v '^rank '
	grep -q "^mpi_msg_a2a $1 $2: $np ranks ok" <<<"$out" || { echo "FAIL: no success line"; fails=$((fails + 1)); }
	grep -q Sanitizer <<<"$out" && { echo "FAIL: a sanitizer report"; fails=$((fails + 1)); }
}
netem() {
	tc qdisc del dev lo root 2>/dev/null
	[ $# -gt 0 ] && { echo "netem on lo: $*"; tc qdisc add dev lo root netem "$@"; }
}
trap 'tc qdisc del dev lo root 2>/dev/null' EXIT
if [ "$mode" = quick ]; then
	run 4 a2a 100000
	run 4 storm 24
else
	run 4 a2a $((4 << 20))
	run 8 a2a 262145
	run 8 storm 16
	netem loss 5%
	run 4 storm 24
	run 4 a2a 100000
	netem delay 1ms 1ms reorder 30% 50%
	run 4 storm 24
	netem
	run 2 big $((64 << 20))
fi
[ "$fails" -eq 0 ] && echo "mpirun_a2a $mode: ok"
exit "$fails"
