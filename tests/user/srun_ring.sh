#!/bin/bash
# In-VM test (stock kernel): Slurm's srun --mpi=pmix starts jobs of the
# library with no launcher of ours. A one-node Slurm (slurm_lib.sh: munged, slurmctld,
# slurmd, configuration and state on the VM's tmpfs /tmp) runs:
#   - examples/ring over 4 ranks (every byte checked by every rank),
#     submitted by nobody, so that Slurm runs the tasks and their PMIx
#     server's files as an unprivileged user;
#   - tests/mpi_msg_a2a pingpong over 2 ranks (tiny, eager and rendezvous
#     round trips, every byte checked);
#   - the ring with --mpi=none, which must fail with the PMIx bootstrap error.
# Each task first prints Slurm's SLURM_PROCID, SLURM_NTASKS, its pid and uid, then
# execs the program (same pid): the rank and size the library got from
# Slurm's PMIx server must be Slurm's, so a job that took them from anywhere
# else fails. Usage: srun_ring.sh (USNIC_REL_BUILD set, module loaded).
set -uo pipefail
build=${USNIC_REL_BUILD:?}
ring=$build/examples/ring
a2a=$build/tests/mpi_msg_a2a
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/user/slurm_lib.sh
. "$here/slurm_lib.sh"
node=$(hostname)
fails=0
trap 'slurm_stop; chmod 0600 /dev/usnic_rel; ip link del urel_srun0 2>/dev/null; rm -rf "$slurm_dir"' EXIT

# Slurm resolves with AI_ADDRCONFIG, which finds nothing on a host whose only
# address is on lo: give the VM one more (the daemons still talk over lo).
if ! ip link add urel_srun0 type veth peer name urel_srun1 ||
	! ip addr add 10.213.77.1/30 dev urel_srun0 || ! ip link set urel_srun0 up; then
	echo "FAIL: veth"
	exit 1
fi
slurm_start 127.0.0.1 "$node:127.0.0.1" || exit 1

# Each task announces what Slurm told it, then becomes the program.
# shellcheck disable=SC2016 # expanded by each task's shell
tell='echo "slurm task $SLURM_PROCID of $SLURM_NTASKS: pid $$ uid $(id -u)"; exec "$@"'
# job [nobody] N PROGRAM ARGS...: srun it, as nobody (uid 65534) if asked.
job() {
	local uid=0 pre=() out t n rc
	if [ "$1" = nobody ]; then
		uid=65534
		pre=(setpriv --reuid="$uid" --regid="$uid" --clear-groups env HOME=/tmp)
		shift
	fi
	n=$1
	shift
	echo "srun --mpi=pmix -n $n $* as uid $uid (at ${SECONDS}s)"
	[ $uid -eq 0 ] || chmod 0666 /dev/usnic_rel
	out=$(cd /tmp && timeout 120 "${pre[@]}" srun --mpi=pmix -O -n "$n" -t 2 \
		sh -c "$tell" sh "$@" 2>&1)
	rc=$?
	chmod 0600 /dev/usnic_rel
	if [ $rc -ne 0 ]; then
		echo "$out"
		echo "FAIL: srun --mpi=pmix -n $n $*"
		fails=$((fails + 1))
		return 1
	fi
	echo "$out"
	# Every task announced itself once, with Slurm's size, as the submitter.
	for ((t = 0; t < n; t++)); do
		[ "$(grep -c "^slurm task $t of $n: pid [0-9]* uid $uid$" <<<"$out")" -eq 1 ] || {
			echo "FAIL: Slurm's task $t of $n did not start once as uid $uid"
			fails=$((fails + 1))
			return 1
		}
	done
	last=$out
}
# pid of Slurm's task $1 in the last job's output
task_pid() {
	sed -n "s/^slurm task $1 of [0-9]*: pid \([0-9]*\) uid [0-9]*$/\1/p" <<<"$last"
}

if job nobody 4 "$ring" 3 100000; then
	grep -q "^ring: 4 ranks, 3 rounds of 100000 bytes: ok (rank 3 is pid $(task_pid 3))$" \
		<<<"$last" || {
		echo "FAIL: no success line, or ring's rank 3 is not Slurm's task 3"
		fails=$((fails + 1))
	}
fi

# ASan without LeakSanitizer: its scan at exit costs 10 s under TCG, and
# mpirun_a2a checks this program for leaks.
if ASAN_OPTIONS=detect_leaks=0 job 2 "$a2a" pingpong 2; then
	slurm_check_pingpong "$last" "$(task_pid 0)" "$(task_pid 1)" || fails=$((fails + $?))
fi

# Without Slurm's PMIx plugin the ranks have no job to join: a clear error.
echo "srun --mpi=none -n 1 ring 1 8 (at ${SECONDS}s)"
if out=$(timeout 60 srun --mpi=none -n 1 -t 1 "$ring" 1 8 2>&1); then
	echo "$out"
	echo "FAIL: ring without PMIx succeeded"
	fails=$((fails + 1))
else
	grep -q 'PMIx bootstrap' <<<"$out" || { echo "FAIL: unclear error: $out"; fails=$((fails + 1)); }
fi

echo "jobs done at ${SECONDS}s"
[ "$fails" -eq 0 ] || slurm_logs
[ "$fails" -eq 0 ] && echo "srun_ring: ok"
exit "$fails"
