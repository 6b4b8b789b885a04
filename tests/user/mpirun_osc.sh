#!/bin/bash
# In-VM test: one-sided windows over jobs started by Open MPI's mpirun (PMIx
# bootstrap): tests/user/osc_job.c on N ranks, ITERS iterations of each
# contended case. Usage: mpirun_osc.sh [--jobs-only] "NP ITERS [VAR=VALUE]" ...
# (default: 2 and 3 ranks, short; VAR=VALUE goes to every rank's environment);
# unless --jobs-only (the debug kernel's short run), then 4 ranks
# with UREL_WIN_LOCK_QUEUE_BYTES=0 (lazy locks whose queued requests' operations
# are discarded and sent again) and UREL_WIN_FAST_LOCK=0 (no lock words), then examples/counter on 3 ranks, then osc_passive on 3 ranks: with the
# progress thread the target computes while the origins lock and accumulate;
# without it (UREL_OSC_PROGRESS_THREAD=0, the control) nothing is served meanwhile. Every rank checks; mpirun fails if any rank does, and rank 0 prints
# the success line only when every rank passed every case.
set -euo pipefail
job=${USNIC_REL_BUILD:?}/tests/osc_job
export HOME=/tmp OMPI_MCA_plm_rsh_agent=false
# osc_job is built with ASan/LSan; libpmix's own leftovers at exit are not ours.
export LSAN_OPTIONS=suppressions=$(cd "$(dirname "$0")" && pwd)/lsan-pmix.supp
fails=0
run() {
	local np=$1 iters=$2 env=${3:-UREL_WIN_LAZY_LOCK=1} out e xs=()
	echo "mpirun -np $np osc_job $iters ($env)"
	for e in $env; do xs+=(-x "$e"); done
	if ! out=$(timeout 500 mpirun --allow-run-as-root --oversubscribe "${xs[@]}" -np "$np" \
		"$job" "$iters" 2>&1); then
		echo "$out"
		echo "FAIL: mpirun -np $np osc_job $iters"
		fails=$((fails + 1))
		return
	fi
	echo "$out"
	grep -q "^osc_job: $np ranks, $iters iterations: ok" <<<"$out" || {
		echo "FAIL: no success line"
		fails=$((fails + 1))
	}
}
jobs_only=0
[ "${1:-}" = --jobs-only ] && jobs_only=1 && shift
[ $# -gt 0 ] || set -- "2 10" "3 5"
for c in "$@"; do
	# shellcheck disable=SC2086
	run $c
done
if [ "$jobs_only" = 1 ]; then
	[ "$fails" -eq 0 ] && echo "mpirun_osc: ok"
	exit "$fails"
fi
# Without lock words (UREL_WIN_FAST_LOCK=0) every exclusive lock queues at the manager too.
run 4 2 "UREL_WIN_LOCK_QUEUE_BYTES=0 UREL_WIN_FAST_LOCK=0"
# The example, as a user runs it (built without sanitizers).
echo "mpirun -np 3 counter 30 7"
if out=$(timeout 300 mpirun --allow-run-as-root --oversubscribe -np 3 \
	"$USNIC_REL_BUILD/examples/counter" 30 7 2>&1) &&
	grep -q "^counter: 3 ranks, 90 tickets in 7 bins: ok" <<<"$out"; then
	echo "$out"
else
	echo "$out"
	echo "FAIL: examples/counter"
	fails=$((fails + 1))
fi
passive() {
	local mode=$1 env=$2 out
	echo "mpirun -np 3 osc_passive 10 $mode ($env)"
	if out=$(timeout 400 mpirun --allow-run-as-root --oversubscribe -x "$env" -np 3 \
		"${USNIC_REL_BUILD}/tests/osc_passive" 10 "$mode" 2>&1) &&
		grep -q "^osc_passive: 3 ranks, 10 iterations, $mode: ok" <<<"$out"; then
		echo "$out"
	else
		echo "$out"
		echo "FAIL: osc_passive $mode"
		fails=$((fails + 1))
	fi
}
passive thread UREL_OSC_PROGRESS_THREAD=1
passive nothread UREL_OSC_PROGRESS_THREAD=0
[ "$fails" -eq 0 ] && echo "mpirun_osc: ok"
exit "$fails"
