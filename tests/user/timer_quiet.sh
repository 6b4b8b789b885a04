#!/bin/bash
# In-VM test: over a lossless 8 B ping-pong of COUNT round trips the
# connection's timers (retransmit, delayed ACK) are started a few times per
# timeout period, not per message: the ACK each answer carries must neither
# cancel nor restart them (lazy timers, kmod/usnic_rel/timers.c). Their
# periods are set long (200 ms delayed ACK, 500 ms probe floor), so that a
# slow VM's round trips (up to 10 ms on a loaded host) still come many to a
# period; the timers' own starts are counted with the timer:hrtimer_start
# tracepoint, by callback name. A module that restarts them per message
# starts them about four times per round trip.
set -uo pipefail
count=${TIMER_QUIET_COUNT:-2000}
tr=/sys/kernel/tracing
bin=$USNIC_REL_BUILD/tests/vm_timer_quiet
fail() { echo "timer_quiet: FAIL: $*"; exit 1; }

[ -d "$tr/events" ] || mount -t tracefs tracefs "$tr" 2>/dev/null ||
	fail "no tracefs at $tr"
[ -d "$tr/events/timer/hrtimer_start" ] || fail "no timer:hrtimer_start event"
insmod "$USNIC_REL_KO" ack_delay_us=200000 rto_min_us=500000 probe_min_us=500000 ||
	fail "insmod"
tmp=$(mktemp -d)
echo 8192 >"$tr/buffer_size_kb"
echo >"$tr/trace"
echo 1 >"$tr/events/timer/hrtimer_start/enable"
"$bin" echo 127.0.0.1 7311 127.0.0.1 7310 "$count" >"$tmp/echo.log" 2>&1 &
echo_pid=$!
sleep 0.3
t0=$(date +%s%N)
"$bin" ping 127.0.0.1 7310 127.0.0.1 7311 "$count" >"$tmp/ping.log" 2>&1
ping_rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
wait $echo_pid
echo_rc=$?
echo 0 >"$tr/events/timer/hrtimer_start/enable"
cp "$tr/trace" "$tmp/trace"
echo >"$tr/trace"
rmmod usnic_rel || fail "rmmod"
cat "$tmp/ping.log" "$tmp/echo.log"
starts=$(grep -c 'function=usnic_rel_' "$tmp/trace")
all=$(grep -c 'hrtimer_start:' "$tmp/trace")
lost=$(grep -c 'LOST' "$tmp/trace")
grep 'function=usnic_rel_' "$tmp/trace" | sed 's/.*function=\([a-z_]*\).*/\1/' | sort | uniq -c
echo "timer_quiet: $count round trips in $ms ms, the module's timers started $starts times (all hrtimer starts: $all, lost events: $lost)"
rm -rf "$tmp"
[ $ping_rc -eq 0 ] && [ $echo_rc -eq 0 ] || fail "ping-pong failed (ping $ping_rc, echo $echo_rc)"
[ "$lost" -eq 0 ] || fail "trace buffer overflowed: counts incomplete"
[ "$all" -gt 0 ] || fail "no hrtimer_start event at all: tracing did not work"
# Each timer may start about once per period it ran (twice, for the
# expiries that find their reason due later): on a host so loaded that the
# round trips take tens of milliseconds, those periods add up.
limit=$((count / 4 + 2 * (ms / 200 + ms / 500)))
[ "$starts" -le "$limit" ] ||
	fail "$starts timer starts for $count round trips in $ms ms (at most $limit)"
echo "timer_quiet: ok"
