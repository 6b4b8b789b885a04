#!/bin/sh
# In-VM test: the module loads, shows itself in /dev, sysfs and debugfs,
# refuses bad parameters and rmmod while in use, and unloads without a trace.
set -eu
ko=$USNIC_REL_KO
fail() { echo "module_lifecycle: $*"; exit 1; }
abi=$(sed -n 's/^#define USNIC_REL_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' include/uapi/usnic_rel.h)

insmod "$ko"
[ -c /dev/usnic_rel ] || fail "no /dev/usnic_rel"
[ "$(cat /sys/class/misc/usnic_rel/abi_version)" = "$abi" ] || fail "sysfs abi_version is not $abi"
[ -d /sys/kernel/debug/usnic_rel ] || fail "no debugfs directory"
[ "$(cat /sys/module/usnic_rel/parameters/send_window)" = 4096 ] || fail "send_window default"

# An open context pins the module.
exec 3<>/dev/usnic_rel
if rmmod usnic_rel 2>/dev/null; then fail "rmmod succeeded with an open context"; fi
exec 3>&-
rmmod usnic_rel
[ ! -e /dev/usnic_rel ] || fail "/dev/usnic_rel left behind"
[ ! -d /sys/kernel/debug/usnic_rel ] || fail "debugfs directory left behind"

# Every parameter has both bounds checked, and the ones that depend on each other.
for bad in send_window=1000 send_window=8192 send_window=0 cmd_mtu=64 cmd_mtu=1025 \
	rto_min_us=0 rto_min_us=199 rto_max_us=60000001 "rto_min_us=9000 rto_max_us=8000" \
	ack_delay_us=5001 "rto_min_us=1000 ack_delay_us=1001" ack_delay_us=4294967295 \
	ack_every=0 ack_every=2049 "send_window=64 ack_every=33" retry_limit=0 retry_limit=65 \
	stall_timeout_ms=99 stall_timeout_ms=600001 probe_min_us=2000001 \
	"rto_max_us=5000 probe_min_us=5001" initial_cwnd=0 "send_window=64 initial_cwnd=65" \
	cwnd_min=1 "send_window=16 cwnd_min=17"; do
	# shellcheck disable=SC2086 # $bad may hold two parameters
	if insmod "$ko" $bad 2>/dev/null; then
		rmmod usnic_rel
		fail "accepted $bad"
	fi
done
insmod "$ko" send_window=64 ack_every=8 rto_min_us=200 ack_delay_us=100 retry_limit=64 \
	rto_max_us=60000000 stall_timeout_ms=600000 initial_cwnd=64 cwnd_min=64
rmmod usnic_rel
insmod "$ko" cwnd_min=2
grep -qx 2 /sys/module/usnic_rel/parameters/cwnd_min || fail "cwnd_min=2 not taken"
rmmod usnic_rel
insmod "$ko" stall_timeout_ms=100 probe_min_us=0
rmmod usnic_rel
insmod "$ko" rto_max_us=5000 probe_min_us=5000
rmmod usnic_rel
echo "module_lifecycle: ok"
