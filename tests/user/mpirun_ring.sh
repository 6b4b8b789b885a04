#!/bin/bash
# In-VM test: Open MPI's mpirun (a PMIx server) starts jobs of
# examples/ring.c, which bootstrap through PMIx (urel_job_init_pmix): 2 and
# 4 ranks, eager and rendezvous tokens. Every rank checks every byte;
# mpirun fails if any rank does. Runs as root in the VM, hence
# --allow-run-as-root; more ranks than CPUs, hence --oversubscribe.
set -euo pipefail
ring=${USNIC_REL_BUILD:?}/examples/ring
export HOME=/tmp OMPI_MCA_plm_rsh_agent=false
fails=0
run() {
	local np=$1 rounds=$2 size=$3 out
	echo "mpirun -np $np ring $rounds $size"
	if ! out=$(timeout 240 mpirun --allow-run-as-root --oversubscribe -np "$np" \
		"$ring" "$rounds" "$size" 2>&1); then
		echo "$out"
		echo "FAIL: mpirun -np $np ring $rounds $size"
		fails=$((fails + 1))
		return
	fi
	echo "$out"
	grep -q "^ring: $np ranks, $rounds rounds of $size bytes: ok" <<<"$out" || {
		echo "FAIL: no success line"
		fails=$((fails + 1))
	}
}
# Without a launcher there is no PMIx job: a clear error, not a hang.
if out=$(timeout 30 "$ring" 1 8 2>&1); then
	echo "FAIL: ring without mpirun succeeded: $out"
	fails=$((fails + 1))
else
	grep -q 'PMIx bootstrap' <<<"$out" || { echo "FAIL: unclear error: $out"; fails=$((fails + 1)); }
fi
run 2 20 8
run 4 5 100000
[ "$fails" -eq 0 ] && echo "mpirun_ring: ok"
exit "$fails"
