#!/bin/bash
# In-VM test: vm_rdma (put, get, atomics, refusals, concurrent fetch-and-add
# between two processes, the target asleep) over lo, then in a network
# namespace whose lo has a 1500-byte MTU so that puts and gets span many
# packets, clean and under netem loss, duplication and reordering: a
# retransmitted atomic must not run twice. On lo, where debugfs is at hand,
# it also counts where the atomics' answers left (VM_RDMA_COUNT_ANSWERS).
set -uo pipefail
bin=$USNIC_REL_BUILD/tests/vm_rdma
status=0

run() {
	local name=$1
	shift
	if "$@" >/tmp/vm_rdma.log 2>&1; then
		echo "ok   $name"
	else
		echo "FAIL $name"
		status=1
	fi
	sed 's/^/     /' /tmp/vm_rdma.log
}

run "lo" env VM_RDMA_COUNT_ANSWERS=1 "$bin"
ns=urel_rdma
ip netns del $ns 2>/dev/null
ip netns add $ns
ip -n $ns link set lo mtu 1500 up
run "netns lo mtu 1500" ip netns exec $ns "$bin"
ip netns exec $ns tc qdisc add dev lo root netem loss 10% duplicate 5% reorder 25% delay 1ms
run "netns lo mtu 1500, 10% loss, 5% dup, 25% reorder" ip netns exec $ns "$bin"
ip netns del $ns
exit $status
