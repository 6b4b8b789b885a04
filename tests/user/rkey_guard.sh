#!/bin/bash
# In-VM test (loads the module itself): vm_rkey's key checks, then DEREG_MR
# while a 1 MiB GET is being answered. The module gets a 32-packet send
# window and the namespace's lo a 1500-byte MTU and a 5 ms delay, so that the
# answer takes many round trips and DEREG_MR lands in the middle of it.
set -uo pipefail
bin=$USNIC_REL_BUILD/tests/vm_rkey
ns=urel_rkey
status=0

insmod "$USNIC_REL_KO" send_window=32 ack_every=16 || exit 1
"$bin" keys || status=1
ip netns del $ns 2>/dev/null
ip netns add $ns
ip -n $ns link set lo mtu 1500 up
ip netns exec $ns tc qdisc add dev lo root netem delay 5ms
# ip netns exec mounts a fresh /sys: debugfs (the counters) again on it.
ip netns exec $ns sh -c 'mount -t debugfs none /sys/kernel/debug && exec "$0" dereg' "$bin" ||
	status=1
ip netns del $ns
rmmod usnic_rel || { echo "rkey_guard: rmmod usnic_rel failed"; status=1; }
exit $status
