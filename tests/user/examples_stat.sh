#!/bin/bash
# In-VM test: the examples (ping-pong and RDMA) between two processes in two
# network namespaces joined by a veth pair, their output checked; then
# usnic-rel-stat against the live module: the counters it prints equal the
# sysfs files, its peers are the debugfs ones, and -i gives rates that are
# nonnegative and equal to the deltas of the counters it read.
set -euo pipefail
build=$USNIC_REL_BUILD
ex=$build/examples
stat=$build/tools/usnic-rel-stat
sysfs=/sys/class/misc/usnic_rel
out=$(mktemp -d)
fail() { echo "examples_stat: $*"; exit 1; }
phase() { echo "examples_stat: [$(cut -d' ' -f1 /proc/uptime) s] $*"; }
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del exA 2>/dev/null || true
	ip netns del exB 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT

ip netns add exA
ip netns add exB
ip link add vethA netns exA type veth peer name vethB netns exB
ip -n exA addr add 10.78.0.1/24 dev vethA
ip -n exB addr add 10.78.0.2/24 dev vethB
ip -n exA link set vethA up
ip -n exB link set vethB up
A="ip netns exec exA" B="ip netns exec exB"

phase "ping-pong"
# Ping-pong: 100 round trips of 1000 bytes, the client checks every echo.
$A "$ex/pingpong" server 10.78.0.1 18301 10.78.0.2 18302 100 1000 >"$out/server" 2>&1 &
server=$!
$B "$ex/pingpong" client 10.78.0.2 18302 10.78.0.1 18301 100 1000 >"$out/client" 2>&1 ||
	fail "pingpong client failed: $(cat "$out/client")"
wait $server || fail "pingpong server failed: $(cat "$out/server")"
cat "$out/server" "$out/client"
grep -qx 'pingpong: echoed 100 messages of 1000 bytes' "$out/server" || fail "server output"
grep -qE '^pingpong: 100 round trips of 1000 bytes: [0-9.]+ us per round trip, [0-9.]+ us one way$' \
	"$out/client" || fail "client output"

phase "rdma"
# RDMA: put, get back, atomics; the target prints what its memory holds.
$A "$ex/rdma" target 10.78.0.1 18303 10.78.0.2 18304 >"$out/target" 2>&1 &
target=$!
$B "$ex/rdma" origin 10.78.0.2 18304 10.78.0.1 18303 >"$out/origin" 2>&1 ||
	fail "rdma origin failed: $(cat "$out/origin")"
wait $target || fail "rdma target failed: $(cat "$out/target")"
cat "$out/target" "$out/origin"
rkey=$(sed -n 's/^target: registered 4096 bytes, rkey \([0-9a-f]\{16\}\) sent$/\1/p' "$out/target")
[ -n "$rkey" ] || fail "target did not publish its key"
diff -u - "$out/origin" <<EOF || fail "origin output"
origin: got rkey $rkey
origin: put 47 bytes, got them back: same
origin: fetch-add 5: old value 0
origin: compare-and-swap 42: old value 5
origin: compare-and-swap 99: old value 42
origin: swap 7: old value 42
origin: all results as expected
EOF
grep -qx 'target: memory holds "written by the origin, read back by the origin", counter 7' \
	"$out/target" || fail "target memory"

phase "usnic-rel-stat on a quiet endpoint"
# usnic-rel-stat on quiet endpoints: a server waiting for a client that does
# not come, after a round of traffic with one that did.
$A "$ex/pingpong" server 10.78.0.1 18305 10.78.0.2 18306 1000000 >/dev/null 2>&1 &
pids+=($!)
$B "$ex/pingpong" client 10.78.0.2 18306 10.78.0.1 18305 20 >/dev/null 2>&1 &
pids+=($!)
ep=
for _ in $(seq 100); do
	ep=$(grep -lx 10.78.0.1:18305 $sysfs/endpoints/ep*/address 2>/dev/null | head -n 1) && break
	sleep 0.1
done
[ -n "$ep" ] || fail "no sysfs endpoint for the ping-pong server"
epdir=$(dirname "$ep")
ep=$(basename "$epdir")
wait "${pids[1]}" || fail "short pingpong client failed"
# The server has echoed and its echoes were acknowledged: nothing moves now
# but the windows, which give their slots back one to two seconds after the
# last packet (the reaper): wait for that too, else a window's slots can
# change between the two reads compared below.
sleep 1
for _ in $(seq 100); do
	[ "$(awk '$1 == "peers_with_window_slots" { print $2 }' \
		/sys/kernel/debug/usnic_rel/"$ep"/memory)" = 0 ] && break
	sleep 0.1
done
"$stat" -a -p >"$out/stat.txt"
cat "$out/stat.txt"
# Name-value pairs of the section that starts with $1 (device: or epN:).
pairs() {
	awk -v head="$1" '/^[^ ]/ { on = index($0, head) == 1; next }
		on && /^    [a-z]/ && !/^    peer / { for (i = 1; i < NF; i += 2) print $i, $(i + 1) }' \
		"$out/stat.txt"
}
files() { for f in "$1"/*; do echo "$(basename "$f") $(cat "$f")"; done | sort; }
# (Files, not <(...): the VM has no /dev/fd.)
files $sysfs/counters >"$out/device.sysfs"
pairs device: | sort >"$out/device.stat"
diff -u "$out/device.sysfs" "$out/device.stat" || fail "device counters differ from sysfs"
files "$epdir/counters" >"$out/ep.sysfs"
pairs "$ep:" | sort >"$out/ep.stat"
diff -u "$out/ep.sysfs" "$out/ep.stat" || fail "$ep counters differ from sysfs"
[ "$(pairs "$ep:" | awk '$1 == "rx_messages" { print $2 }')" -ge 20 ] ||
	fail "$ep received fewer than 20 messages"
grep -q "^$ep: 10.78.0.1:18305 pid $(cat "$epdir/pid") incarnation $(cat "$epdir/incarnation") mtu_cmd " \
	"$out/stat.txt" || fail "$ep attributes"
# last_rx_ms is an age: it moves between the two reads.
age='s/ last_rx_ms [0-9]*/ last_rx_ms N/'
sed -e 's/^/    /' -e "$age" /sys/kernel/debug/usnic_rel/"$ep"/peers >"$out/peers.debugfs"
awk -v head="$ep:" '/^[^ ]/ { on = index($0, head) == 1; next }
	on && /^    (peer|  chan|  handshake) /' "$out/stat.txt" | sed "$age" >"$out/peers.stat"
[ -s "$out/peers.stat" ] || fail "no peers shown for $ep"
grep -q '^      handshake paired ' "$out/peers.stat" || fail "no pairing state shown for $ep"
diff -u "$out/peers.debugfs" "$out/peers.stat" || fail "$ep peers differ from debugfs"
kill "${pids[0]}"

phase "usnic-rel-stat -i under load"
# Rates under load: a ping-pong runs throughout the three reports, at the
# lowest priority so that the tool and the checks get the CPU (debug kernels).
$A nice -n 19 "$ex/pingpong" server 10.78.0.1 18307 10.78.0.2 18308 1000000 >/dev/null 2>&1 &
pids+=($!)
$B nice -n 19 "$ex/pingpong" client 10.78.0.2 18308 10.78.0.1 18307 1000000 >/dev/null 2>&1 &
pids+=($!)
# Sample once the exchange runs: the client has had an echo back.
flowing=
for _ in $(seq 600); do
	a=$(grep -lx 10.78.0.2:18308 $sysfs/endpoints/ep*/address 2>/dev/null) &&
		[ "$(cat "$(dirname "$a")/counters/rx_messages")" -gt 0 ] && flowing=1 && break
	sleep 0.1
done
[ -n "$flowing" ] || fail "the loaded ping-pong never got an echo"
"$stat" -i 1 -c 3 -j >"$out/rates.json"
phase "checking the rates"
{ kill -0 "${pids[2]}" && kill -0 "${pids[3]}"; } || fail "the ping-pong stopped during the reports"
python3 - "$out/rates.json" <<'EOF' || fail "rates inconsistent"
import json, sys
reports = [json.loads(l) for l in open(sys.argv[1])]
assert len(reports) == 3, len(reports)
moved = 0
def check(name, prev, cur, t):
    global moved
    for k, v in cur["counters"].items():
        rate = cur["rates"][k]
        assert rate >= 0, (name, k, rate)
        if prev is not None and k in prev["counters"] and prev["counters"][k] <= v:
            d = v - prev["counters"][k]
            # Rates have 3 decimals and intervals 6: allow twice their rounding.
            assert abs(rate * t - d) <= 0.001 * t + 1e-6 * rate + 1e-6, (name, k, rate, t, d)
            if k == "tx_packets":
                moved += d
for i, r in enumerate(reports):
    t = r["interval_s"]
    assert t > 0, t
    prev = reports[i - 1] if i else None
    check("device", prev["device"] if prev else None, r["device"], t)
    for ep in r["endpoints"]:
        old = [e for e in (prev["endpoints"] if prev else [])
               if e["id"] == ep["id"] and e["incarnation"] == ep["incarnation"]]
        check("ep%d" % ep["id"], old[0] if old else None, ep, t)
assert moved > 0, "no packets between the reports while a ping-pong ran"
print("rates: %d reports, %d packets sent between them" % (len(reports), moved))
EOF
echo "examples_stat: ok"
