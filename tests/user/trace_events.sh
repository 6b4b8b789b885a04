#!/bin/bash
# In-VM test: the usnic_rel tracepoints (usnic_rel_tx, _rx, _ack, _retransmit)
# fire during a transfer whose sender drops 20 % of its packets by fault
# injection. Fails, never passes, when tracefs or the events are missing.
set -uo pipefail
bin=$USNIC_REL_BUILD/tests/vm_reliable
tr=/sys/kernel/tracing
fail() { echo "trace_events: FAIL: $*"; exit 1; }

[ -d "$tr/events" ] || mount -t tracefs tracefs "$tr" 2>/dev/null ||
	fail "no tracefs at $tr"
for e in usnic_rel_tx usnic_rel_rx usnic_rel_ack usnic_rel_retransmit; do
	[ -d "$tr/events/usnic_rel/$e" ] || fail "no event usnic_rel/$e"
done
echo 4096 >"$tr/buffer_size_kb"
echo >"$tr/trace"
echo 1 >"$tr/events/usnic_rel/enable" || fail "cannot enable the events"

tmp=$(mktemp -d)
VM_RELIABLE_DONE=$tmp/done "$bin" rx 127.0.0.1 7201 127.0.0.1 7202 40 >"$tmp/rx.log" 2>&1 &
rxpid=$!
sleep 0.3
VM_RELIABLE_FAULT=drop=200000 "$bin" tx 127.0.0.1 7202 127.0.0.1 7201 40 1 >"$tmp/tx.log" 2>&1
txrc=$?
echo "$txrc" >"$tmp/done.new" && mv "$tmp/done.new" "$tmp/done"
wait $rxpid
rxrc=$?
echo 0 >"$tr/events/usnic_rel/enable"
cp "$tr/trace" "$tmp/trace"
echo >"$tr/trace"
cat "$tmp/tx.log" "$tmp/rx.log"
status=0
[ $txrc -eq 0 ] && [ $rxrc -eq 0 ] || { echo "transfer failed (tx $txrc, rx $rxrc)"; status=1; }
# expect EVENT PATTERN: at least one line of EVENT matching PATTERN.
expect() {
	local n
	n=$(grep -E " $1: " "$tmp/trace" | grep -cE "$2")
	echo "$1 /$2/: $n lines"
	[ "$n" -gt 0 ] || status=1
}
expect usnic_rel_tx 'ep=[0-9]+ peer=[0-9]+ type=[0-9]+ channel=[01] seq=[0-9]+ len=[0-9]+'
expect usnic_rel_rx 'channel=[01] seq=[0-9]+ len=[0-9]+ in_order'
expect usnic_rel_rx ' ack '
expect usnic_rel_ack 'ack=[0-9]+ sack=0x[0-9a-f]+ freed=[1-9]'
expect usnic_rel_retransmit 'channel=[01] seq=[0-9]+ (timeout|fast)'
grep -m3 usnic_rel_retransmit "$tmp/trace"
rm -rf "$tmp"
[ $status -eq 0 ] || fail "missing events"
echo "trace_events: ok"
