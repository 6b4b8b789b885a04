#!/bin/bash
# In-VM test (stock kernel): one job across two Slurm nodes. Each node is a
# network namespace with its own slurmd, so its own slurmstepd and PMIx
# server, joined to the controller by a bridge: the ranks learn each
# other's endpoint addresses only through the two PMIx servers exchanging
# them (Slurm's mpi/pmix plugin, between the nodes' step daemons), and
# their traffic crosses the nodes' veths.
#   - examples/ring over 4 ranks, 2 per node, every byte checked, as nobody;
#   - tests/mpi_msg_a2a pingpong over 2 ranks, one per node.
# Each task prints Slurm's node, rank and size, takes its node's address
# for UREL_ADDR (as a job script does), then execs the program. The test
# checks the placement Slurm reported against the ranks PMIx gave, and
# that the ring's bytes crossed between the nodes (the bridge ports'
# counters), not a loopback.
# Usage: srun_nodes.sh (USNIC_REL_BUILD set, module loaded).
set -uo pipefail
build=${USNIC_REL_BUILD:?}
ring=$build/examples/ring
a2a=$build/tests/mpi_msg_a2a
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/user/slurm_lib.sh
. "$here/slurm_lib.sh"
fails=0
net=10.213.79

cleanup() {
	slurm_stop
	chmod 0600 /dev/usnic_rel
	ip netns del urel_nodeA 2>/dev/null
	ip netns del urel_nodeB 2>/dev/null
	ip link del urel_nbr 2>/dev/null
	rm -rf "$slurm_dir"
}
trap cleanup EXIT

# The controller on a bridge in the VM's namespace; node N at $net.N+1 behind
# a veth whose bridge end is urel_n<N>.
ip link add urel_nbr type bridge &&
	ip addr add "$net.1/24" dev urel_nbr && ip link set urel_nbr up || {
	echo "FAIL: bridge"
	exit 1
}
i=2
for n in A B; do
	ip netns add "urel_node$n" &&
		ip link add "urel_n$n" type veth peer name eth0 netns "urel_node$n" &&
		ip link set "urel_n$n" master urel_nbr up &&
		ip -n "urel_node$n" addr add "$net.$i/24" dev eth0 &&
		ip -n "urel_node$n" link set eth0 up && ip -n "urel_node$n" link set lo up || {
		echo "FAIL: node $n's namespace"
		exit 1
	}
	i=$((i + 1))
done
slurm_start "$net.1" "nodeA:$net.2:urel_nodeA" "nodeB:$net.3:urel_nodeB" || exit 1

# Each task announces itself, takes its node's address, becomes the program.
# shellcheck disable=SC2016 # expanded by each task's shell
tell='case $SLURMD_NODENAME in nodeA) a='$net'.2 ;; nodeB) a='$net'.3 ;; *) exit 3 ;; esac
echo "slurm task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME: pid $$"
UREL_ADDR=$a exec "$@"'
bytes() { cat "/sys/class/net/urel_n$1/statistics/$2_bytes"; }
# job [nobody] NODES TASKS PROGRAM ARGS...
job() {
	local pre=() out rc nodes tasks
	if [ "$1" = nobody ]; then
		pre=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp)
		chmod 0666 /dev/usnic_rel
		shift
	fi
	nodes=$1 tasks=$2
	shift 2
	echo "srun --mpi=pmix -N $nodes -n $tasks $* (at ${SECONDS}s)"
	out=$(cd /tmp && timeout 180 "${pre[@]}" srun --mpi=pmix -O -N "$nodes" -n "$tasks" \
		-t 3 sh -c "$tell" sh "$@" 2>&1)
	rc=$?
	chmod 0600 /dev/usnic_rel
	echo "$out"
	last=$out
	[ $rc -eq 0 ] || {
		echo "FAIL: srun -N $nodes -n $tasks $*"
		fails=$((fails + 1))
		return 1
	}
}
# placement TASK NODE: Slurm started task TASK once, on NODE.
placement() {
	[ "$(grep -c "^slurm task $1 of [0-9]* on $2: pid [0-9]*$" <<<"$last")" -eq 1 ] || {
		echo "FAIL: Slurm's task $1 did not start once on $2"
		fails=$((fails + 1))
	}
}
task_pid() {
	sed -n "s/^slurm task $1 of [0-9]* on [A-Za-z]*: pid \([0-9]*\)$/\1/p" <<<"$last"
}

rounds=3 size=100000
a0=$(bytes A rx) b0=$(bytes B rx)
if job nobody 2 4 "$ring" "$rounds" "$size"; then
	for t in 0 1; do placement $t nodeA; done
	for t in 2 3; do placement $t nodeB; done
	grep -q "^ring: 4 ranks, $rounds rounds of $size bytes: ok (rank 3 is pid $(task_pid 3))$" \
		<<<"$last" || {
		echo "FAIL: no success line, or ring's rank 3 is not Slurm's task 3"
		fails=$((fails + 1))
	}
	# Ranks 1 -> 2 and 3 -> 0 cross every round: at least that much from each node.
	da=$(($(bytes A rx) - a0)) db=$(($(bytes B rx) - b0))
	echo "bytes out of nodeA $da, out of nodeB $db (ring: $((rounds * size)) each way at least)"
	if [ "$da" -lt $((rounds * size)) ] || [ "$db" -lt $((rounds * size)) ]; then
		echo "FAIL: the ring's messages did not cross between the nodes"
		fails=$((fails + 1))
	fi
fi

if ASAN_OPTIONS=detect_leaks=0 job 2 2 "$a2a" pingpong 2; then
	placement 0 nodeA
	placement 1 nodeB
	slurm_check_pingpong "$last" "$(task_pid 0)" "$(task_pid 1)" || fails=$((fails + $?))
fi

echo "jobs done at ${SECONDS}s"
[ "$fails" -eq 0 ] || slurm_logs
[ "$fails" -eq 0 ] && echo "srun_nodes: ok"
exit "$fails"
