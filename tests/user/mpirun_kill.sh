#!/bin/bash
# In-VM test: a job of 4 ranks under mpirun in which the last rank kills
# itself (SIGKILL) while the others have sends and receives outstanding with
# it (tests/user/mpi_msg_kill.c). --enable-recovery keeps mpirun from
# tearing the job down, so the survivors must find the failure themselves:
# each prints "rank R: ok" only when every request with the dead rank ended
# in an error and the survivors still talk. A hang hits the timeout: failure.
set -uo pipefail
prog=${USNIC_REL_BUILD:?}/tests/mpi_msg_kill
here=$(cd "$(dirname "$0")" && pwd)
export HOME=/tmp OMPI_MCA_plm_rsh_agent=false UREL_MSG_KEEPALIVE_MS=200
# The test is built with ASan: leaks of ours fail it, PMIx's own are suppressed.
export LSAN_OPTIONS=suppressions=$here/lsan-pmix.supp:print_suppressions=0
np=4
out=$(timeout 300 mpirun --allow-run-as-root --oversubscribe --enable-recovery -np $np "$prog" 2>&1)
rc=$?
echo "$out"
fails=0
[ "$rc" -eq 124 ] && { echo "FAIL: the job hung (timeout)"; fails=1; }
for r in $(seq 0 $((np - 2))); do
	grep -q "^rank $r: ok$" <<<"$out" || { echo "FAIL: rank $r did not finish ok"; fails=1; }
	grep -q "^rank $r: eager send to the dead rank failed" <<<"$out" ||
		{ echo "FAIL: rank $r saw no eager send fail"; fails=1; }
done
grep -q "Sanitizer" <<<"$out" && { echo "FAIL: a sanitizer report"; fails=1; }
grep -q "^rank $((np - 1)): killing myself$" <<<"$out" || { echo "FAIL: the victim never died"; fails=1; }
grep -q "rank $((np - 1)): ok" <<<"$out" && { echo "FAIL: the victim survived"; fails=1; }
[ "$fails" -eq 0 ] && echo "mpirun_kill: ok"
exit "$fails"
