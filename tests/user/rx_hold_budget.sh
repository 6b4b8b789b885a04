#!/bin/bash
# In-VM test (loads the module itself): out-of-order packets held for
# reassembly are charged to the endpoint owner, over all its endpoints
# (max_rx_held_kb_per_user, here 1 MiB); see vm_hold_budget.c.
set -u
insmod "$USNIC_REL_KO" max_rx_held_kb_per_user=1024 || exit 1
"$USNIC_REL_BUILD/tests/vm_hold_budget"
rc=$?
rmmod usnic_rel || { echo "rx_hold_budget: rmmod usnic_rel failed"; rc=1; }
# Out of bounds, the parameter is refused.
if insmod "$USNIC_REL_KO" max_rx_held_kb_per_user=63 2>/dev/null; then
	echo "rx_hold_budget: max_rx_held_kb_per_user=63 was accepted"
	rmmod usnic_rel
	rc=1
fi
exit $rc
