#!/bin/sh
# In-VM test (loads the module itself, with max_eps_per_user=4): vm_limits.
insmod "$USNIC_REL_KO" max_eps_per_user=4 || exit 1
"$USNIC_REL_BUILD/tests/vm_limits"
rc=$?
rmmod usnic_rel || { echo "limits: rmmod usnic_rel failed"; exit 1; }
exit $rc
