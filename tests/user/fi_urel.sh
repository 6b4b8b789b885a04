#!/bin/bash
# In-VM test of the libfabric provider (prov/, liburel-fi.so), found through
# FI_PROVIDER_PATH: fi_info lists it with the capabilities and limits it
# really has, and refuses hints it cannot meet; then libfabric's own
# fi_pingpong runs over it between two network namespaces joined by a veth
# pair, untagged and tagged, every size, with its data checks (-c) and
# -I iterations; and fi_rma_check (tests/fi/) runs RMA and atomics there,
# every byte and fetched value checked, refusals as error completions,
# writes with remote CQ data and messages, reads and writes of several iovs, and
# then again in one process on its own window through its own address (what
# Open MPI's btl ofi does for a rank's own window when ranks span nodes);
# threads share an endpoint at FI_THREAD_SAFE (fi_threads), and every
# threading level carries traffic (fi_levels).
set -euo pipefail
export FI_PROVIDER_PATH=${USNIC_REL_BUILD:?}/prov
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
cleanup() { ip netns del urA 2>/dev/null || true; ip netns del urB 2>/dev/null || true; }
trap cleanup EXIT
# bound NS PORT: wait (30 s at most) until a UDP socket in NS is bound to PORT.
bound() {
	local i
	for i in $(seq 100); do
		ip netns exec "$1" ss -Hlun "sport = :$2" | grep -q . && return 0
		sleep 0.3
	done
}
# pair NAME BIN SPORT CPORT: BIN -s in urA at 10.78.0.1:SPORT against BIN -c in
# urB at 10.78.0.2:CPORT, the client started once the server's port is bound.
pair() {
	local name=$1 bin=$2 sport=$3 cport=$4 pid
	echo "$name -s 10.78.0.1 $sport 10.78.0.2 $cport / -c"
	ip netns exec urA timeout 600 "$bin" -s 10.78.0.1 "$sport" 10.78.0.2 "$cport" \
		>"$tmp/${name}_server" 2>&1 &
	pid=$!
	bound urA "$sport"
	ip netns exec urB timeout 600 "$bin" -c 10.78.0.2 "$cport" 10.78.0.1 "$sport" ||
		fail "$name (client)"
	wait $pid || fail "$name (server)"
	cat "$tmp/${name}_server"
}

info=$(fi_info -p urel -v) || fail "fi_info -p urel"
for want in 'type: FI_EP_RDM' 'caps: \[ FI_MSG, FI_RMA, FI_TAGGED, FI_ATOMIC, FI_READ, FI_WRITE, FI_RECV, FI_SEND, FI_REMOTE_READ, FI_REMOTE_WRITE, FI_REMOTE_CQ_DATA, FI_LOCAL_COMM, FI_REMOTE_COMM, FI_SOURCE, FI_DIRECTED_RECV \]' \
	'mr_mode: \[ FI_MR_ALLOCATED, FI_MR_PROV_KEY \]' 'mr_key_size: 8' 'rma_iov_limit: 8' 'iov_limit: 8' \
	'msg_order: \[ FI_ORDER_SAS \]' 'inject_size: 256' 'data_progress: FI_PROGRESS_MANUAL' \
	'threading: FI_THREAD_SAFE' 'cq_data_size: 8' 'mem_tag_format: 0x7fffffffffffffff' \
	'prov_name: urel'; do
	grep -q "$want" <<<"$info" || fail "fi_info lacks '$want'"
done
# Tagged only: the top match bit is no longer reserved for untagged messages.
fi_info -p urel -c FI_TAGGED -v | grep -q 'mem_tag_format: 0xffffffffffffffff' ||
	fail "tagged-only info keeps the reserved bit"
# Write notices share the context: FI_RMA reserves the top match bit too.
fi_info -p urel -c 'FI_TAGGED|FI_RMA' -v | grep -q 'mem_tag_format: 0x7fffffffffffffff' ||
	fail "tagged RMA info leaves the notices' match bit to the application"
# RMA and atomics need registrations with our keys; messages alone need none.
for caps in FI_RMA FI_ATOMIC; do
	fi_info -p urel -c "$caps" -v | grep -q 'mr_mode: \[ FI_MR_ALLOCATED, FI_MR_PROV_KEY \]' ||
		fail "fi_info -c $caps: no RMA MR mode"
done
fi_info -p urel -c FI_TAGGED -v | grep -q 'mr_mode: \[  \]' ||
	fail "tagged-only info asks for memory registration"
# What the provider does not do is refused, not promised: datagram
# endpoints, remote RMA events (the module tells a target process nothing of
# the writes it applies), registrations of several ranges, counters.
if fi_info -p urel -t FI_EP_DGRAM >/dev/null 2>&1; then
	fail "fi_info offers datagram endpoints"
fi
if fi_info -p urel -c 'FI_RMA|FI_RMA_EVENT' >/dev/null 2>&1; then
	fail "fi_info offers FI_RMA_EVENT"
fi
for want in 'mr_iov_limit: 1$' 'cntr_cnt: 0$'; do
	grep -q "$want" <<<"$info" || fail "fi_info lacks '$want'"
done
# max_msg_size is the library's limit, not RLIMIT_MEMLOCK's: a rendezvous
# send registers what cannot be pinned at once piecewise, so an unprivileged
# process under a small memlock limit is offered the same size as root
# (Open MPI refuses any message above it).
maxmsg() { awk '/max_msg_size:/ { print $2; exit }'; }
got=$(maxmsg <<<"$info")
[ "$got" = 1099511627776 ] || fail "max_msg_size with CAP_IPC_LOCK: $got"
got=$(prlimit --memlock=4194304:4194304 setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all fi_info -p urel -v 2>/dev/null | maxmsg)
[ "$got" = 1099511627776 ] || fail "max_msg_size under a 4 MiB memlock limit: $got"

ip netns add urA
ip netns add urB
ip link add vethA netns urA type veth peer name vethB netns urB
ip -n urA addr add 10.78.0.1/24 dev vethA
ip -n urB addr add 10.78.0.2/24 dev vethB
for ns in urA urB; do
	ip -n $ns link set lo up
done
ip -n urA link set vethA up
ip -n urB link set vethB up

pingpong() {
	local out
	echo "fi_pingpong -p urel -e rdm $*"
	ip netns exec urA timeout 300 fi_pingpong -p urel -e rdm "$@" >"$tmp/server" 2>&1 &
	local pid=$! i
	# The client connects to the server's control port: wait until it listens.
	for i in $(seq 100); do
		ip netns exec urA ss -Hltn 'sport = :47592' | grep -q . && break
		sleep 0.3
	done
	if ! out=$(ip netns exec urB timeout 300 fi_pingpong -p urel -e rdm "$@" 10.78.0.1 2>&1); then
		echo "$out"
		fail "fi_pingpong $* (client)"
	fi
	wait $pid || { cat "$tmp/server"; fail "fi_pingpong $* (server)"; }
	echo "$out"
	# Every size of the run has its line of figures.
	[ "$(grep -cE '^[0-9.]+[kmg]? +[0-9]+' <<<"$out")" -ge "$want_lines" ] ||
		fail "fi_pingpong $*: fewer than $want_lines sizes reported"
}
tmp=$(mktemp -d)
# Every size from 0 to 8 MiB (tiny, eager and rendezvous messages); few
# iterations, as TCG is slow; then many iterations of one size per protocol.
want_lines=40
pingpong -S all -I 2 -c
pingpong -S all -I 2 -c -m tagged
want_lines=1
pingpong -S 64 -I 500 -c -m tagged
pingpong -S 4096 -I 200 -c
pingpong -S 100000 -I 30 -c -m tagged

# RMA and atomics between the namespaces (both bind fixed ports: the module
# answers only peers its endpoint knows).
rma=$USNIC_REL_BUILD/tests/fi_rma_check
pair fi_rma_check "$rma" 47700 47701
echo "fi_rma_check -l 10.78.0.1 47710"
ip netns exec urA timeout 600 "$rma" -l 10.78.0.1 47710 || fail "fi_rma_check -l (own window)"
# Threads sharing one endpoint and CQ (FI_THREAD_SAFE): every echo once, no completion lost
# while other threads poll the queue empty.
pair fi_threads "$USNIC_REL_BUILD/tests/fi_threads" 47730 47731
# Every threading level is given as asked and carries traffic (fi_levels: one
# thread, two endpoints of one domain); FI_THREAD_DOMAIN opens a domain without
# endpoint, CQ or library (UREL_EP_SERIAL) locks, FI_THREAD_COMPLETION one without
# CQ locks, the rest lock.
echo "fi_levels 10.78.0.1 47740"
if ip netns exec urA env FI_LOG_LEVEL=info FI_LOG_PROV=urel timeout 600 \
	"$USNIC_REL_BUILD/tests/fi_levels" 10.78.0.1 47740 >"$tmp/levels" 2>&1; then
	grep -v '^libfabric:' "$tmp/levels"
else
	grep -v '^libfabric:' "$tmp/levels" | tail -20
	fail "fi_levels"
fi
for want in 'FI_THREAD_SAFE: endpoint locks on, CQ locks on, library locks on' \
	'FI_THREAD_FID: endpoint locks on, CQ locks on, library locks on' \
	'FI_THREAD_DOMAIN: endpoint locks off, CQ locks off, library locks off' \
	'FI_THREAD_COMPLETION: endpoint locks on, CQ locks off, library locks on' \
	'FI_THREAD_ENDPOINT: endpoint locks on, CQ locks on, library locks on'; do
	grep -q "threading $want" "$tmp/levels" || fail "fi_levels: no domain with '$want'"
done
# FI_UREL_THREADING names the level of hints that leave it unspecified (fi_pingpong's).
FI_UREL_THREADING=domain fi_info -p urel -v | grep -q 'threading: FI_THREAD_DOMAIN' ||
	fail "FI_UREL_THREADING=domain: not the level of unspecified hints"
# With the eager limit no longer than the tiny one (both 128 B), no notice can
# ride the data channel: it waits for the puts to complete instead; the
# target's checks are the same.
echo "fi_rma_check, writes with CQ data only, UREL_MSG_TINY_MAX=UREL_MSG_EAGER_MAX=128"
FI_LOG_LEVEL=info FI_LOG_PROV=urel UREL_MSG_TINY_MAX=128 UREL_MSG_EAGER_MAX=128 WD_ONLY=1 ip netns exec urA timeout 300 "$rma" -s 10.78.0.1 47730 10.78.0.2 47731 >"$tmp/wd_server" 2>&1 &
pid=$!
bound urA 47730
UREL_MSG_TINY_MAX=128 UREL_MSG_EAGER_MAX=128 WD_ONLY=1 ip netns exec urB timeout 300 "$rma" -c 10.78.0.2 47731 10.78.0.1 47730 ||
	fail "fi_rma_check writes with CQ data after the puts (client)"
wait $pid || fail "fi_rma_check writes with CQ data after the puts (server)"
grep -v '^libfabric:' "$tmp/wd_server"
grep -q 'notices of writes with CQ data wait for their puts' "$tmp/wd_server" ||
	fail "the notices did not wait for their puts"
# Writes with CQ data again over a lossy link both ways: a lost piece of a
# write is sent again later, so a notice that did not queue behind its write
# (another channel, or posted before the last piece) would reach the target
# first, and the target checks the bytes when it reads the completion.
for v in "urA vethA" "urB vethB"; do
	set -- $v
	ip netns exec "$1" tc qdisc add dev "$2" root netem loss 10% delay 1ms
done
echo "fi_rma_check, writes with CQ data only, netem loss 10% both ways"
# The client's endpoint first: the server's first message (the key) then finds
# it, instead of being resent at a closed port while a loaded VM starts it.
WD_ONLY=3 ip netns exec urB timeout 300 "$rma" -c 10.78.0.2 47721 10.78.0.1 47720 >"$tmp/wd_client" 2>&1 &
cpid=$!
bound urB 47721
WD_ONLY=3 ip netns exec urA timeout 300 "$rma" -s 10.78.0.1 47720 10.78.0.2 47721 ||
	fail "fi_rma_check writes with CQ data under loss (server)"
wait $cpid || fail "fi_rma_check writes with CQ data under loss (client)"
cat "$tmp/wd_client"
rm -rf "$tmp"
[ "$fails" -eq 0 ] && echo "fi_urel: ok"
exit "$fails"
