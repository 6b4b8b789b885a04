#!/bin/bash
# Host test of usnic-rel-stat on a fake sysfs/debugfs tree (USNIC_REL_SYSFS,
# USNIC_REL_DEBUGFS): the text layout, hidden zeros, peers, JSON, errors, and
# rates computed from consecutive reads. Counters that must change between two
# reads are named pipes: each read of the tool takes the next value the test
# writes, so the deltas are exact whatever the timing.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$src/build}
stat=$build/tools/usnic-rel-stat
fake=$build/stat-test
fail() { echo "check_stat: $*"; exit 1; }
[ -x "$stat" ] || fail "$stat not built (make tools)"

rm -rf "$fake"
sys=$fake/sys dbg=$fake/debug
mkdir -p "$sys/counters" "$dbg/ep0"
echo 3 >"$sys/abi_version"
put() { # put DIR name=value...
	local dir=$1
	shift
	mkdir -p "$dir"
	for kv in "$@"; do echo "${kv#*=}" >"$dir/${kv%%=*}"; done
}
put "$sys/counters" tx_packets=10 tx_bytes=1000 rx_packets=9 rx_bytes=900 retx_timeout=0 \
	rx_stale_incarnation=0 acks_delayed=4
put "$sys/endpoints/ep0" address=10.0.0.1:4791 pid=42 incarnation=0000abcd mtu_cmd=768 \
	mtu_data=1472 peers=1
put "$sys/endpoints/ep0/counters" tx_packets=6 tx_bytes=600 retx_timeout=0 rx_packets=5
put "$sys/endpoints/ep12" "address=[fd00::2]:5000" pid=43 incarnation=12345678 mtu_cmd=768 \
	mtu_data=1452 peers=0
put "$sys/endpoints/ep12/counters" tx_packets=0 rx_packets=0
cat >"$dbg/ep0/peers" <<'EOF'
peer 1 10.0.0.2:4791 active incarnation 00c0ffee srtt_us 120 rttvar_us 60 rto_us 5000 backoff 0 retries 0
  chan 0 tx una 5 next 5 unacked 0 sacked 0 dup_acks 0 recovery 0 rx next 3 held 0 backlog 0 ack_pending 0
  chan 1 tx una 7 next 9 unacked 2 sacked 1 dup_acks 0 recovery 0 rx next 0 held 0 backlog 0 ack_pending 1
EOF
export USNIC_REL_SYSFS=$sys USNIC_REL_DEBUGFS=$dbg

# Totals: sorted by name, three a line, zeros hidden, endpoints by number.
diff -u - <("$stat") <<'EOF' || fail "default report differs"
device: abi 3, 2 endpoints
    acks_delayed    4   rx_bytes      900   rx_packets      9
    tx_bytes     1000   tx_packets     10
ep0: 10.0.0.1:4791 pid 42 incarnation 0000abcd mtu_cmd 768 mtu_data 1472 peers 1
    rx_packets   5   tx_bytes   600   tx_packets   6
ep12: [fd00::2]:5000 pid 43 incarnation 12345678 mtu_cmd 768 mtu_data 1452 peers 0
    all counters are zero (-a shows them)
EOF

# -a shows zeros; -p the peers, or why they cannot be read; -e one endpoint.
diff -u - <("$stat" -a -p) <<EOF || fail "-a -p report differs"
device: abi 3, 2 endpoints
    acks_delayed            4   retx_timeout            0   rx_bytes              900
    rx_packets              9   rx_stale_incarnation    0   tx_bytes             1000
    tx_packets             10
ep0: 10.0.0.1:4791 pid 42 incarnation 0000abcd mtu_cmd 768 mtu_data 1472 peers 1
    retx_timeout   0   rx_packets     5   tx_bytes     600
    tx_packets     6
    peer 1 10.0.0.2:4791 active incarnation 00c0ffee srtt_us 120 rttvar_us 60 rto_us 5000 backoff 0 retries 0
      chan 0 tx una 5 next 5 unacked 0 sacked 0 dup_acks 0 recovery 0 rx next 3 held 0 backlog 0 ack_pending 0
      chan 1 tx una 7 next 9 unacked 2 sacked 1 dup_acks 0 recovery 0 rx next 0 held 0 backlog 0 ack_pending 1
ep12: [fd00::2]:5000 pid 43 incarnation 12345678 mtu_cmd 768 mtu_data 1452 peers 0
    rx_packets 0   tx_packets 0
    peers: not readable: $dbg/ep12/peers: No such file or directory (root and a mounted debugfs needed)
EOF
diff -u - <("$stat" -e 0) <<'EOF' || fail "-e 0 report differs"
ep0: 10.0.0.1:4791 pid 42 incarnation 0000abcd mtu_cmd 768 mtu_data 1472 peers 1
    rx_packets   5   tx_bytes   600   tx_packets   6
EOF

# JSON: every counter, attributes typed, peers parsed.
"$stat" -j -p | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["device"]["abi_version"] == 3
assert r["device"]["counters"] == {"tx_packets": 10, "tx_bytes": 1000, "rx_packets": 9,
    "rx_bytes": 900, "retx_timeout": 0, "rx_stale_incarnation": 0, "acks_delayed": 4}
e0, e12 = r["endpoints"]
assert (e0["id"], e0["address"], e0["pid"], e0["incarnation"], e0["mtu_cmd"], e0["mtu_data"],
        e0["peers"]) == (0, "10.0.0.1:4791", 42, "0000abcd", 768, 1472, 1), e0
assert e0["counters"]["retx_timeout"] == 0 and e0["counters"]["tx_bytes"] == 600
(p,) = e0["peer_detail"]
assert (p["handle"], p["address"], p["state"], p["incarnation"], p["srtt_us"]) == \
    (1, "10.0.0.2:4791", "active", "00c0ffee", 120), p
assert [c["chan"] for c in p["chans"]] == [0, 1]
assert p["chans"][1]["tx_unacked"] == 2 and p["chans"][1]["rx_next"] == 0
assert e12["address"] == "[fd00::2]:5000" and "peer_detail_error" in e12
assert "rates" not in r["device"] and "interval_s" not in r
' || fail "JSON report wrong"

# Rates: a device counter rising 100, 250, 400 and an endpoint counter reset
# (60, 80, then 20 after a module reload), read through pipes.
rm "$sys/counters/tx_packets" "$sys/endpoints/ep0/counters/tx_packets"
mkfifo "$sys/counters/tx_packets" "$sys/endpoints/ep0/counters/tx_packets"
# feed FIFO values...: one value per read. The pipe stays open throughout (read
# and write, so a value can wait in it while the tool has it closed) and the
# next value goes in only once the last one was read (FIONREAD 0): the pipe
# never holds two values, and each read takes exactly one.
feed() {
	timeout 30 python3 -c '
import array, fcntl, os, sys, termios, time
fd = os.open(sys.argv[1], os.O_RDWR)
for v in sys.argv[2:]:
    os.write(fd, (v + "\n").encode())
    n = array.array("i", [1])
    while n[0]:
        time.sleep(0.001)
        fcntl.ioctl(fd, termios.FIONREAD, n)
os.close(fd)
' "$@"
}
feed "$sys/counters/tx_packets" 100 250 400 &
feeder1=$!
feed "$sys/endpoints/ep0/counters/tx_packets" 60 80 20 &
feeder2=$!
timeout 30 "$stat" -i 0.2 -c 2 -j >"$fake/rates.json" || fail "-i run failed"
{ wait $feeder1 && wait $feeder2; } || fail "the tool did not read the counters once per report"
python3 - "$fake/rates.json" <<'EOF' || fail "rates wrong"
import json, sys
reports = [json.loads(l) for l in open(sys.argv[1])]
assert len(reports) == 2, len(reports)
def near(a, b):
    return abs(a - b) <= 1e-3 * max(1.0, abs(b)) + 1e-3
for r, (dev, ep) in zip(reports, [(250, 80), (400, 20)]):
    t = r["interval_s"]
    assert t > 0, t
    d, e = r["device"], r["endpoints"][0]
    assert d["counters"]["tx_packets"] == dev and e["counters"]["tx_packets"] == ep
    assert near(d["rates"]["tx_packets"], 150 / t), (d["rates"], t)
    # 80 - 60 = 20, then a reset: counted from zero, 20.
    assert near(e["rates"]["tx_packets"], 20 / t), (e["rates"], t)
    for obj in [d] + r["endpoints"]:
        for name, rate in obj["rates"].items():
            assert rate >= 0, (name, rate)
            if name != "tx_packets":
                assert rate == 0, (name, rate)
EOF
# The text form of the same: the header gives the interval, unchanged counters are hidden.
feed "$sys/counters/tx_packets" 0 50 &
feeder1=$!
feed "$sys/endpoints/ep0/counters/tx_packets" 0 0 &
feeder2=$!
timeout 30 "$stat" -i 0.2 -c 1 >"$fake/rates.txt" || fail "-i text run failed"
{ wait $feeder1 && wait $feeder2; } || fail "the tool did not read the counters once per report"
secs=$(sed -n '1s/.*rates per second over \([0-9.]*\) s$/\1/p' "$fake/rates.txt")
[ -n "$secs" ] || fail "no interval in: $(head -n 1 "$fake/rates.txt")"
rate=$(sed -n 's/^    tx_packets \([0-9.]*\)$/\1/p' "$fake/rates.txt")
# The header rounds the interval to 10 ms and the rate to 0.1.
awk -v s="$secs" -v r="$rate" 'BEGIN { exit !(r != "" && r >= 50 / (s + 0.005) - 0.05 &&
	r <= 50 / (s - 0.005) + 0.05) }' || fail "text rate $rate, not 50 in $secs s"
sed -e '1d' -e 's/^    tx_packets [0-9.]*$/    tx_packets RATE/' "$fake/rates.txt" | diff -u - <(
	cat <<EOF
device: abi 3, 2 endpoints
    tx_packets RATE
ep0: 10.0.0.1:4791 pid 42 incarnation 0000abcd mtu_cmd 768 mtu_data 1472 peers 1
    no counter changed (-a shows them)
ep12: [fd00::2]:5000 pid 43 incarnation 12345678 mtu_cmd 768 mtu_data 1452 peers 0
    no counter changed (-a shows them)

EOF
) || fail "text rates differ"

rm "$sys/counters/tx_packets" "$sys/endpoints/ep0/counters/tx_packets"
put "$sys/counters" tx_packets=10
put "$sys/endpoints/ep0/counters" tx_packets=6

# Errors: module missing, unknown endpoint, bad options.
out=$(USNIC_REL_SYSFS=$fake/none "$stat" 2>&1) && fail "ran without the module"
[ "$out" = "usnic-rel-stat: usnic_rel not loaded: $fake/none missing; modprobe usnic_rel" ] ||
	fail "module missing: $out"
out=$("$stat" -e 5 2>&1) && fail "-e 5 succeeded"
[ "$out" = "usnic-rel-stat: no endpoint ep5 in $sys/endpoints" ] || fail "-e 5: $out"
rc=0
"$stat" -c 2 >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "-c without -i: exit $rc"
rc=0
"$stat" -i 0 >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "-i 0: exit $rc"
rc=0
"$stat" -z >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "-z: exit $rc"
"$stat" --help | grep -q 'Usage: usnic-rel-stat' || fail "--help"
echo "check_stat: ok"
