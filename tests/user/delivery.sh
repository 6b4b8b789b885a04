#!/bin/sh
# In-VM test: vm_delivery with a 16-packet send window (a receiver that
# returns no buffers fills it at once) and a retry limit high enough that
# such a peer stays alive for the whole run (over a minute of backoff).
# Then its persist case with retry_limit=6, stall_timeout_ms=1000 and a
# 20 ms RTO floor: a receiver that answers with RNR ACKs stays alive past
# both. Tighter limits made it a timing test: under TCG beside other VMs
# the first RNR ACK came more than 100 ms after the first send, or two
# resends in a row went unanswered within 15 ms.
set -u
bin=$USNIC_REL_BUILD/tests/vm_delivery
cases=${*:-reset remove nomem slow doorbell cqfull trickle persist}
rc=0
first=
for c in $cases; do
	[ "$c" = persist ] || first="$first $c"
done
if [ -n "$first" ]; then
	insmod "$USNIC_REL_KO" send_window=16 ack_every=8 retry_limit=40 || exit 1
	# shellcheck disable=SC2086
	"$bin" $first || rc=1
	rmmod usnic_rel || rc=1
fi
case " $cases " in
*" persist "*)
	insmod "$USNIC_REL_KO" send_window=16 ack_every=8 retry_limit=6 stall_timeout_ms=1000 rto_min_us=20000 || exit 1
	"$bin" persist || rc=1
	rmmod usnic_rel || rc=1
	;;
esac
exit $rc
