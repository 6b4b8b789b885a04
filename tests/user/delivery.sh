#!/bin/sh
# In-VM test: vm_delivery with a 16-packet send window (a receiver that
# returns no buffers fills it at once) and a retry limit high enough that
# such a peer stays alive for the whole run (over a minute of backoff).
set -u
insmod "$USNIC_REL_KO" send_window=16 ack_every=8 retry_limit=40 || exit 1
"$USNIC_REL_BUILD/tests/vm_delivery" "$@"
rc=$?
rmmod usnic_rel || rc=1
exit $rc
