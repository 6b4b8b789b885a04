#!/bin/bash
# In-VM test: the module's own fault injection (debugfs ep<N>/fault_*) on a
# transfer between two processes over lo. vm_reliable checks that every byte
# arrives once and in order, that out-of-range rates are refused, that the
# faults asked for happened (ep<N>/fault) and that the sender retransmitted;
# packets that never left the host (skb allocation failures) are resent early,
# not by the timer, probes or SACKs, and a GSO run without memory goes packet
# by packet.
# Usage: fault_inject.sh [COUNT]
set -uo pipefail
count=${1:-200}
bin=$USNIC_REL_BUILD/tests/vm_reliable
status=0
tmp=$(mktemp -d)

# run NAME RX_FAULTS TX_FAULTS [MIN_RETX]
run() {
	local name=$1 min_retx=${4:-1}
	rm -f "$tmp/done"
	VM_RELIABLE_FAULT=$2 VM_RELIABLE_DONE=$tmp/done "$bin" rx 127.0.0.1 7101 127.0.0.1 7102 \
		"$count" >"$tmp/rx.log" 2>&1 &
	local rxpid=$!
	sleep 0.3
	VM_RELIABLE_FAULT=$3 "$bin" tx 127.0.0.1 7102 127.0.0.1 7101 "$count" "$min_retx" \
		>"$tmp/tx.log" 2>&1
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

run "sender drops 10%" "" "drop=100000"
run "sender's next 200 skbs fail to allocate: resent early, not by loss recovery" "" \
	"xmit_nomem_next=200" 0
run "sender's GSO skbs fail to allocate: packet by packet, no error" "" \
	"gso_nomem_next=100000" 0
run "sender drops 10%, duplicates 5%, reorders 10%; receiver drops 10%" \
	"drop=100000" "drop=100000,duplicate=50000,reorder=100000"
rm -rf "$tmp"
exit $status
