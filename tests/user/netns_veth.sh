#!/bin/sh
# In-VM test: two processes in two network namespaces joined by a veth pair
# exchange messages over IPv4 and IPv6; each endpoint lives in the network
# namespace of the process that opened the device.
set -eu
bin=$USNIC_REL_BUILD/tests/vm_msg
fail() { echo "netns_veth: $*"; exit 1; }
cleanup() { ip netns del urA 2>/dev/null || true; ip netns del urB 2>/dev/null || true; }
trap cleanup EXIT

ip netns add urA
ip netns add urB
ip link add vethA netns urA type veth peer name vethB netns urB
ip -n urA addr add 10.77.0.1/24 dev vethA
ip -n urB addr add 10.77.0.2/24 dev vethB
ip -n urA addr add fd77::1/64 dev vethA nodad
ip -n urB addr add fd77::2/64 dev vethB nodad
for ns in urA urB; do
	ip -n $ns link set lo up
done
ip -n urA link set vethA up
ip -n urB link set vethB up

run() {
	fam=$1 a=$2 b=$3
	ip netns exec urA "$bin" recv "$fam" "$a" 18001 "$b" 18002 &
	pid=$!
	ip netns exec urB "$bin" send "$fam" "$b" 18002 "$a" 18001 || fail "IPv$fam sender failed"
	wait $pid || fail "IPv$fam receiver failed"
}
run 4 10.77.0.1 10.77.0.2
run 6 fd77::1 fd77::2

# A subnet's broadcast address is refused as UDP refuses it without
# SO_BROADCAST: nothing reaches a listener on the other side.
ip netns exec urA python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 18005))
s.settimeout(4)
try:
    s.recv(2048)
except socket.timeout:
    sys.exit(0)
sys.exit(1)' &
listener=$!
sleep 0.5
ip netns exec urB timeout 3 "$bin" send 4 10.77.0.2 18006 10.77.0.255 18005 >/dev/null 2>&1 || true
wait $listener || fail "a datagram to the subnet broadcast address left the sender"

# The address of urA does not exist in the initial namespace.
if "$bin" recv 4 10.77.0.1 18001 10.77.0.2 18002 2>/dev/null; then
	fail "bound an address of another namespace"
fi
echo "netns_veth: ok"
