# shellcheck shell=bash
# Sourced by the in-VM Slurm tests (srun_ring.sh, srun_nodes.sh): a private
# Slurm cluster on the VM's tmpfs /tmp: munged, slurmctld and one slurmd per
# node, configuration and state in a fresh directory $slurm_dir.
#
#   slurm_start CTLD_ADDR NODE...    NODE is NAME:ADDR[:NETNS]
#
# A node with NETNS has its slurmd (and so its tasks) run in that network
# namespace, bound to ADDR there; the others share the VM's. Every node says
# it has the VM's CPUs. Returns non-zero (after printing why) if a daemon does
# not start or a node never becomes idle. slurm_stop stops them all;
# slurm_logs prints the tails of their logs.

slurm_dir=$(mktemp -d /tmp/slurm.XXXXXX) || exit 1
export SLURM_CONF=$slurm_dir/slurm.conf
# LeakSanitizer (the jobs' programs are ASan builds): PMIx's own leaks.
LSAN_OPTIONS=suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan-pmix.supp:print_suppressions=0
export LSAN_OPTIONS

slurm_pidof_file() {
	[ -s "$1" ] && cat "$1"
}

slurm_stop() {
	local f p
	for f in "$slurm_dir"/slurmd-*.pid "$slurm_dir/slurmctld.pid" "$slurm_dir/munged.pid"; do
		p=$(slurm_pidof_file "$f") || continue
		kill "$p" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$p" 2>/dev/null
	done
}

slurm_logs() {
	local f
	for f in "$slurm_dir"/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }
	done
}

slurm_start() {
	local ctld=$1 spec name addr ns names=() n
	shift
	for c in munged slurmctld slurmd srun scontrol sinfo; do
		command -v "$c" >/dev/null || { echo "FAIL: $c missing (make deps)"; return 1; }
	done
	# munge: a fresh key, the socket in our own directory (which munged wants
	# searchable by all, so that any user's srun can authenticate).
	chmod 755 "$slurm_dir"
	dd if=/dev/urandom of="$slurm_dir/munge.key" bs=1024 count=1 status=none
	chmod 600 "$slurm_dir/munge.key"
	munged --origin=127.0.0.1 --key-file="$slurm_dir/munge.key" \
		--socket="$slurm_dir/munge.sock" --pid-file="$slurm_dir/munged.pid" \
		--log-file="$slurm_dir/munged.log" --seed-file="$slurm_dir/munged.seed" ||
		{ echo "FAIL: munged"; slurm_logs; return 1; }
	mkdir -p "$slurm_dir/ctld"
	cat >"$SLURM_CONF" <<EOF
ClusterName=urel
SlurmctldHost=$(hostname)($ctld)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$slurm_dir/munge.sock
CredType=cred/munge
StateSaveLocation=$slurm_dir/ctld
SlurmdSpoolDir=$slurm_dir/spool-%n
TmpFS=$slurm_dir/tmp
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd-%n.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
EOF
	for spec in "$@"; do
		IFS=: read -r name addr ns <<<"$spec"
		echo "NodeName=$name NodeAddr=$addr CPUs=$(nproc) State=UNKNOWN" >>"$SLURM_CONF"
		names+=("$name")
	done
	echo "PartitionName=all Nodes=$(
		IFS=,
		echo "${names[*]}"
	) Default=YES MaxTime=INFINITE State=UP" >>"$SLURM_CONF"
	# slurmd initialises a cgroup plugin even when nothing uses it: v1 needs
	# no more than a directory (the VM has no cgroup mounts of its own).
	echo CgroupPlugin=cgroup/v1 >"$slurm_dir/cgroup.conf"
	slurmctld -i || { echo "FAIL: slurmctld"; slurm_logs; return 1; }
	for spec in "$@"; do
		IFS=: read -r name addr ns <<<"$spec"
		mkdir -p "$slurm_dir/spool-$name" "$slurm_dir/tmp-$name" "$slurm_dir/tmp"
		# A node of its own has its own TmpFS (where the PMIx plugin keeps
		# each step's files): bound over the shared path in the private
		# mount namespace 'ip netns exec' gives the slurmd and its tasks.
		if [ -n "$ns" ]; then
			# shellcheck disable=SC2016 # expanded by that shell
			ip netns exec "$ns" sh -c 'mount --bind "$1" "$2" && exec slurmd -N "$3"' \
				sh "$slurm_dir/tmp-$name" "$slurm_dir/tmp" "$name"
		else
			slurmd -N "$name"
		fi || { echo "FAIL: slurmd $name"; slurm_logs; return 1; }
	done
	for _ in $(seq 200); do
		n=$(sinfo -h -t idle -o %D 2>/dev/null)
		[ "${n:-0}" -eq "${#names[@]}" ] && {
			echo "slurm up at ${SECONDS}s: $(sinfo -h -o '%P %D %T %c %N')"
			return 0
		}
		sleep 0.3
	done
	echo "FAIL: the nodes never all became idle"
	sinfo
	slurm_logs
	return 1
}

# Check the output $1 of a 2-rank tests/mpi_msg_a2a pingpong whose Slurm
# tasks 0 and 1 had pids $2 and $3: PMIx gave each Slurm's rank, each rank
# checked its messages, the job succeeded. Prints a FAIL line per failed
# check; returns how many failed.
slurm_check_pingpong() {
	local out=$1 t pid bad=0
	shift
	for t in 0 1; do
		pid=$1
		shift
		grep -q "^rank $t of 2: pid $pid$" <<<"$out" || {
			echo "FAIL: Slurm's task $t (pid $pid) is not PMIx rank $t of 2"
			bad=$((bad + 1))
		}
		grep -q "^rank $t: pingpong: 12 messages received and checked$" <<<"$out" || {
			echo "FAIL: rank $t did not check its 12 messages"
			bad=$((bad + 1))
		}
	done
	grep -q "^mpi_msg_a2a pingpong 2: 2 ranks ok$" <<<"$out" || {
		echo "FAIL: no success line"
		bad=$((bad + 1))
	}
	return $bad
}
