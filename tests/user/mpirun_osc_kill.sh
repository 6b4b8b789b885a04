#!/bin/bash
# In-VM test: a window over 4 ranks under mpirun in which the last rank kills
# itself (SIGKILL) while rank 0 holds its exclusive lock and the others wait
# for it (tests/user/osc_kill.c). --enable-recovery keeps mpirun from tearing
# the job down, so the survivors must find the death themselves: each prints
# "rank R: ok" only when its waiting lock, flush and unlock at the dead rank
# failed with UREL_WIN_ERR_PEER, later operations to it failed at once, and
# the window still worked among the survivors: rank 0's calls that wait only
# on a live rank complete beside a request the dead one never answers, the
# survivors' PSCW ring completes and a fence (which needs the dead) fails.
# A hang hits the timeout: failure.
# Then tests/user/osc_origin_kill.c: an origin dies holding a lock (taken on
# the target's lock word, then again from its manager), and the target's
# progress thread gives the lock to the origin waiting behind it; on the
# word, a lock_all epoch beside the dead rank then gives every word back.
set -uo pipefail
prog=${USNIC_REL_BUILD:?}/tests/osc_kill
here=$(cd "$(dirname "$0")" && pwd)
export HOME=/tmp OMPI_MCA_plm_rsh_agent=false UREL_MSG_KEEPALIVE_MS=200 UREL_OSC_KEEPALIVE_MS=200
# The test is built with ASan: leaks of ours fail it, PMIx's own are suppressed.
export LSAN_OPTIONS=suppressions=$here/lsan-pmix.supp:print_suppressions=0
# A call that returned must leave nothing in flight that writes to its stack.
export ASAN_OPTIONS=detect_stack_use_after_return=1
np=4
# Streamed to the log as it comes, so a hang shows how far each rank got.
log=$(mktemp)
timeout 400 mpirun --allow-run-as-root --oversubscribe --enable-recovery -x UREL_WIN_LAZY_LOCK=0 -np $np "$prog" 2>&1 |
	tee "$log"
rc=${PIPESTATUS[0]}
out=$(cat "$log")
rm -f "$log"
fails=0
[ "$rc" -eq 124 ] && { echo "FAIL: the job hung (timeout)"; fails=1; }
for r in $(seq 0 $((np - 2))); do
	grep -q "^rank $r: ok$" <<<"$out" || { echo "FAIL: rank $r did not finish ok"; fails=1; }
	grep -q "^rank $r: the survivors' window still works$" <<<"$out" ||
		{ echo "FAIL: rank $r: the survivors' window"; fails=1; }
done
grep -q "^rank 0: flush and unlock at the dead rank failed$" <<<"$out" ||
	{ echo "FAIL: rank 0's flush/unlock did not fail"; fails=1; }
grep -q "^rank 0: operations beside the dead rank completed$" <<<"$out" ||
	{ echo "FAIL: rank 0's calls on a live rank failed beside the dead one"; fails=1; }
for r in $(seq 0 $((np - 2))); do
	grep -q "^rank $r: PSCW among the survivors completed$" <<<"$out" ||
		{ echo "FAIL: rank $r: PSCW among the survivors"; fails=1; }
done
for r in $(seq 1 $((np - 2))); do
	grep -q "^rank $r: the lock waiting at the dead rank failed$" <<<"$out" ||
		{ echo "FAIL: rank $r's waiting lock did not fail"; fails=1; }
done
grep -q "Sanitizer" <<<"$out" && { echo "FAIL: a sanitizer report"; fails=1; }
grep -q "^rank $((np - 1)): killing myself$" <<<"$out" || { echo "FAIL: the victim never died"; fails=1; }
grep -q "rank $((np - 1)): ok" <<<"$out" && { echo "FAIL: the victim survived"; fails=1; }

# Then an origin dies holding a lock (tests/user/osc_origin_kill.c): the
# target must take the lock back and grant the next origin, whether the lock
# was taken on the target's lock word (the default) or from its manager.
origin_kill() {
	local fast=$1 how=$2 log out rc
	log=$(mktemp)
	timeout 300 mpirun --allow-run-as-root --oversubscribe --enable-recovery \
		-x UREL_WIN_LAZY_LOCK=0 -x UREL_WIN_FAST_LOCK="$fast" -x UREL_WIN_FAST_SHARED="$fast" \
		-np 3 "${USNIC_REL_BUILD}/tests/osc_origin_kill" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	out=$(cat "$log")
	rm -f "$log"
	[ "$rc" -eq 124 ] && { echo "FAIL: osc_origin_kill ($how) hung (timeout)"; fails=1; }
	for r in 0 1; do
		grep -q "^rank $r: ok$" <<<"$out" || { echo "FAIL: osc_origin_kill ($how) rank $r"; fails=1; }
	done
	grep -q "^rank 2: holding the lock $how$" <<<"$out" ||
		{ echo "FAIL: osc_origin_kill: the lock was not held $how"; fails=1; }
	grep -q "^rank 0: the lock of the dead rank went to rank 1$" <<<"$out" ||
		{ echo "FAIL: the dead origin's lock ($how) was not reclaimed"; fails=1; }
	if [ "$fast" = 1 ]; then
		grep -q "^rank 0: lock_all's word given back$" <<<"$out" ||
			{ echo "FAIL: lock_all beside the dead rank left rank 0's word held"; fails=1; }
	fi
	grep -q "Sanitizer" <<<"$out" && { echo "FAIL: a sanitizer report"; fails=1; }
}
origin_kill 1 "through the word"
origin_kill 0 "from the manager"
[ "$fails" -eq 0 ] && echo "mpirun_osc_kill: ok"
exit "$fails"
