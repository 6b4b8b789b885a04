#!/bin/bash
# In-VM test: unmodified Open MPI runs tests/mpi/mpi_twosided.c (built with
# mpicc) over its OFI MTL and the urel provider, on 2, 4 and 8 ranks; the
# program checks every result and aborts the job on any failure. The
# provider's own log (FI_LOG_LEVEL=info) must show that urel carried it.
# Then tests/mpi/mpi_onesided.c runs with osc rdma over btl ofi restricted to
# urel, on 2 and 3 ranks: with only osc rdma and btls self and ofi (urel),
# a window reaches another rank through urel or not at all; and
# tests/mpi/mpi_atomic_self.c on 3 ranks: compare-and-swap and fetch-and-op
# to the rank's own window and to the others', on every window flavor.
# The 2-rank two-sided job runs as nobody under an 8 MiB memlock limit and
# also sends 64 MiB messages (mpi_twosided big); "mpi_urel.sh big" runs only
# that job. Its provider log (FI_LOG_LEVEL=info) must show windows
# registered piecewise and no failed piecewise send, and that every rank's
# domain was opened at FI_THREAD_DOMAIN without the provider's locks.
# For the one-sided runs, the provider logs (FI_LOG_LEVEL=info) how many
# writes, reads and atomics each endpoint posted: none of the three may be 0.
set -euo pipefail
prog=${USNIC_REL_BUILD:?}/tests/mpi_twosided
export HOME=/tmp OMPI_MCA_plm_rsh_agent=false FI_PROVIDER_PATH=$USNIC_REL_BUILD/prov
fails=0
# run NP [nobody]: as nobody, under the usual 8 MiB memlock limit, the
# program also sends 64 MiB messages (and 16 MiB ones two at a time), every
# byte checked: Open MPI must not refuse them (max_msg_size), and the
# library's rendezvous registers them piecewise instead of hanging.
run() {
	local np=$1 user=${2:-} out rc=0 t0=$SECONDS
	local pre=(env) args=() root=(--allow-run-as-root) log=()
	if [ "$user" = nobody ]; then
		pre=(prlimit --memlock=8388608:8388608 setpriv --reuid=65534 --regid=65534
			--clear-groups --inh-caps=-all env HOME=/tmp)
		args=(big)
		root=()
		log=(-x FI_LOG_LEVEL=info -x FI_LOG_PROV=urel)
		chmod 0666 /dev/usnic_rel
	fi
	echo "${user:+as $user, memlock 8 MiB: }mpirun -np $np --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include urel mpi_twosided ${args[*]}"
	out=$(cd /tmp && timeout 400 "${pre[@]}" mpirun "${root[@]}" --oversubscribe -np "$np" \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include urel \
		--mca mtl_base_verbose 100 -x FI_PROVIDER_PATH "${log[@]}" "$prog" "${args[@]}" 2>&1) ||
		rc=$?
	[ "$user" = nobody ] && chmod 0600 /dev/usnic_rel
	if [ $rc -ne 0 ]; then
		echo "$out" | tail -40
		echo "FAIL: mpirun -np $np ${user:+as $user} (rc $rc)"
		fails=$((fails + 1))
		return
	fi
	grep -E 'mtl:ofi:prov|mpi_twosided' <<<"$out" || true
	echo "($((SECONDS - t0)) s)"
	grep -q "^mpi_twosided: $np ranks ok${args:+ (with 64 MiB)}" <<<"$out" || {
		echo "$out" | tail -40
		echo "FAIL: -np $np: no success line"
		fails=$((fails + 1))
	}
	grep -q 'mtl:ofi:provider: urel' <<<"$out" || {
		echo "FAIL: -np $np: Open MPI did not select urel"
		fails=$((fails + 1))
	}
	[ "$user" = nobody ] || return 0
	# The 64 MiB messages went piecewise (windows logged as each endpoint closed), none failed.
	local win
	win=$({ grep -o 'piecewise rendezvous: .*' <<<"$out" || true; } |
		awk '{ w += $3; f += $12 } END { print w + 0, f + 0 }')
	echo "piecewise (windows, failed sends): $win"
	set -- $win
	[ "$1" -gt 0 ] && [ "$2" -eq 0 ] || {
		echo "FAIL: -np $np as $user: no piecewise windows, or failed piecewise sends"
		fails=$((fails + 1))
	}
	# MPI_Init (no MPI_THREAD_MULTIPLE): the mtl asks for FI_THREAD_DOMAIN, and the
	# provider takes neither endpoint nor CQ locks, nor the library its own
	# (UREL_EP_SERIAL; every rank's domain says so).
	local cheap
	cheap=$(grep -c 'threading FI_THREAD_DOMAIN: endpoint locks off, CQ locks off, library locks off' <<<"$out" || true)
	echo "domains at FI_THREAD_DOMAIN without locks: $cheap of $np ranks"
	[ "$cheap" -ge "$np" ] || {
		grep 'threading FI_THREAD' <<<"$out" | sort | uniq -c || true
		echo "FAIL: -np $np: not every rank's domain took the lock-free path"
		fails=$((fails + 1))
	}
}
run 2 nobody
if [ "${1:-}" = big ]; then
	[ "$fails" -eq 0 ] && echo "mpi_urel: ok"
	exit "$fails"
fi
run 4
run 8

onesided() {
	local np=$1 prog=${2:-mpi_onesided} out
	echo "mpirun -np $np ... --mca osc rdma --mca btl self,ofi --mca btl_ofi_provider_include urel $prog"
	if ! out=$(timeout 600 mpirun --allow-run-as-root --oversubscribe -np "$np" \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include urel \
		--mca osc rdma --mca btl self,ofi --mca btl_ofi_provider_include urel \
		--mca osc_base_verbose 10 -x FI_PROVIDER_PATH -x FI_LOG_LEVEL=info -x FI_LOG_PROV=urel \
		"$USNIC_REL_BUILD/tests/$prog" 2>&1); then
		echo "$out" | tail -60
		echo "FAIL: one-sided -np $np"
		fails=$((fails + 1))
		return
	fi
	grep -E "rdma component|$prog" <<<"$out" | head -8 || true
	grep -q "^$prog: $np ranks ok" <<<"$out" || {
		echo "$out" | tail -60
		echo "FAIL: one-sided -np $np: no success line"
		fails=$((fails + 1))
	}
	# osc rdma reaches some windows by shared memory: the provider's own
	# counts (logged as each endpoint closes) show that puts, gets and
	# atomics really went through urel.
	local sums
	sums=$({ grep 'endpoint closed:' <<<"$out" || true; } |
		sed -E 's/.*endpoint closed: ([0-9]+) sends, ([0-9]+) receives, ([0-9]+) writes, ([0-9]+) reads, ([0-9]+) atomics.*/\3 \4 \5/' |
		awk '{ w += $1; r += $2; a += $3; n++ } END { print n + 0, w + 0, r + 0, a + 0 }')
	echo "$prog -np $np through urel (endpoints, writes, reads, atomics): $sums"
	set -- $sums
	# mpi_atomic_self does atomics only.
	[ "$prog" = mpi_atomic_self ] && set -- "$1" 1 1 "$4"
	[ "$1" -ge "$np" ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] && [ "$4" -gt 0 ] || {
		echo "FAIL: one-sided -np $np: not every kind of operation went through urel"
		fails=$((fails + 1))
	}
}
onesided 2
onesided 3
onesided 3 mpi_atomic_self
[ "$fails" -eq 0 ] && echo "mpi_urel: ok"
exit "$fails"
