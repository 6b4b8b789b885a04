#!/bin/sh
# In-VM test: vm_spoof across a veth pair between two network namespaces.
# A (urA, 10.77.0.1:18001) and B (urB, 10.77.0.2:18002) talk while an
# attacker in urB forges B's address and port towards A from a raw socket.
# Usage: spoof_veth.sh [WIRE_VERSION]   (the attacker's; default the built one)
set -u
bin=$USNIC_REL_BUILD/tests/vm_spoof
fail() { echo "spoof_veth: $*"; exit 1; }
tmp=$(mktemp -d)
cleanup() {
	ip netns del urA 2>/dev/null || true
	ip netns del urB 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

ip netns add urA
ip netns add urB
ip link add vethA netns urA type veth peer name vethB netns urB
ip -n urA addr add 10.77.0.1/24 dev vethA
ip -n urB addr add 10.77.0.2/24 dev vethB
for ns in urA urB; do
	ip -n $ns link set lo up
done
ip -n urA link set vethA up
ip -n urB link set vethB up

# "ip netns exec" mounts a sysfs of its own: the counters need debugfs back.
in_ns() {
	ns=$1
	shift
	ip netns exec "$ns" sh -c 'mount -t debugfs debugfs /sys/kernel/debug && exec "$@"' \
		sh "$@"
}
in_ns urA "$bin" node A 10.77.0.1 18001 10.77.0.2 18002 "$tmp" &
a=$!
in_ns urB "$bin" node B 10.77.0.2 18002 10.77.0.1 18001 "$tmp" &
b=$!
ip netns exec urB "$bin" attack 10.77.0.2 18002 10.77.0.1 18001 "$tmp" ${1:-} || rc=1
rc=${rc:-0}
wait $a || rc=1
wait $b || rc=1
[ $rc -eq 0 ] || fail "failed"
echo "spoof_veth: ok"
