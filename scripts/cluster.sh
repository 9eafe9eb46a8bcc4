#!/usr/bin/env bash
# A three-node local RabbitMQ cluster for AceMQ's failover tests.
#
#   scripts/cluster.sh start          start (or reuse) the three nodes, join
#                                     c2 and c3 to c1, print the three AMQP URLs
#   scripts/cluster.sh stop           stop every node of the cluster that is running
#   scripts/cluster.sh run CMD        start the cluster, run CMD, and stop every node
#                                     when CMD ends (also when it fails or the script
#                                     is interrupted); exits as CMD does
#   scripts/cluster.sh kill NODE      SIGKILL NODE's Erlang VM (a crash, not a stop)
#   scripts/cluster.sh restart NODE   start NODE again and wait until it is back
#                                     in the cluster
#   scripts/cluster.sh leader QUEUE   print the node hosting quorum queue QUEUE's
#                                     leader (vhost /)
#   scripts/cluster.sh ping NODE      succeed if NODE answers
#
# Each node is a scripts/rabbitmq.sh node with its own environment.
# ACEMQ_RABBITMQ_SERIES picks the RabbitMQ, as for rabbitmq.sh: 3.10 (the
# default, the host's) or 4.3 (Debian sid's, in the chroot rabbitmq.sh
# makes; its data must lie inside it). ACEMQ_CLUSTER_NODES,
# ACEMQ_CLUSTER_PORTS and ACEMQ_CLUSTER_MGMT_PORTS (three space-separated
# words each) and ACEMQ_CLUSTER_DIR override the defaults. make test
# derives them from the checkout (docs/testing.md); the defaults are for a
# cluster by hand: acemq-c1..c3@localhost on 5681-5683 (3.10, data in
# .rabbitmq/cluster), acemq-d1..d3@localhost on 5691-5693 (4.3, data in the
# chroot's /srv/acemq/cluster43). Each node's Erlang distribution port is
# its AMQP port + 20000 (RabbitMQ's default).
#
# RabbitMQ 3.10 keeps the cluster's metadata in Mnesia, 4.3 in Khepri (a
# Raft log), which boot differently after every node went down: see
# boot_order and start.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

SERIES=${ACEMQ_RABBITMQ_SERIES:-3.10}
case $SERIES in
3.10) defaults=(c 5681 "$ROOT/.rabbitmq/cluster") ;;
4.3) defaults=(d 5691 "${ACEMQ_SID_ROOT:-/var/cache/acemq/sid}/srv/acemq/cluster43") ;;
*) echo "cluster.sh: ACEMQ_RABBITMQ_SERIES=$SERIES: a cluster is 3.10 or 4.3" >&2; exit 2 ;;
esac
read -r -a NODES <<<"${ACEMQ_CLUSTER_NODES:-$(for i in 1 2 3; do echo "acemq-${defaults[0]}$i@localhost"; done)}"
read -r -a PORTS <<<"${ACEMQ_CLUSTER_PORTS:-$(for i in 0 1 2; do echo $((defaults[1] + i)); done)}"
read -r -a MGMT_PORTS <<<"${ACEMQ_CLUSTER_MGMT_PORTS:-$(for p in "${PORTS[@]}"; do echo $((p + 10000)); done)}"
DIR=${ACEMQ_CLUSTER_DIR:-${defaults[2]}} # node i keeps its data in $DIR/c$((i+1))
TIMEOUT=${ACEMQ_RABBITMQ_TIMEOUT:-120}           # seconds to wait for a node to (re)join
SEED=${NODES[0]}                                 # c2 and c3 join this node

log() { echo "cluster.sh: $*" >&2; }

# index NODE: the node's position in NODES (exits if it is not one of them).
index() {
	local i
	for i in "${!NODES[@]}"; do
		[[ ${NODES[i]} == "$1" ]] && { echo "$i"; return; }
	done
	log "unknown node $1 (one of: ${NODES[*]})"
	exit 2
}

# node_sh I ARGS: scripts/rabbitmq.sh ARGS for node I. The distribution port
# is set explicitly (rabbitmq-server's default is the same) so it is visible here.
node_sh() {
	local i=$1
	shift
	RABBITMQ_NODENAME=${NODES[i]} RABBITMQ_NODE_PORT=${PORTS[i]} \
		RABBITMQ_DIST_PORT=$((PORTS[i] + 20000)) \
		ACEMQ_RABBITMQ_MGMT_PORT=${MGMT_PORTS[i]} ACEMQ_RABBITMQ_DIR=$DIR/c$((i + 1)) \
		bash "$ROOT/scripts/rabbitmq.sh" "$@"
}

# ctl NODE ARGS: rabbitmqctl ARGS against NODE, the series' own (a 4.3
# node's is inside its chroot, with the chroot's cookie).
ctl() {
	local i
	i=$(index "$1")
	shift
	node_sh "$i" ctl "$@"
}

up() { ctl "$1" ping >/dev/null 2>&1; }

# running NODE: NODE's VM runs (its pid file, checked in /proc): no
# rabbitmqctl, whose own VM costs a second or two of CPU a call.
running() { pid_of "$1" >/dev/null; }

# members NODE: the cluster's disc nodes as NODE records them (works offline
# from NODE's point of view: a node remembers its cluster while others are down).
members() {
	ctl "$1" cluster_status --formatter json 2>/dev/null |
		sed -n 's/.*"disk_nodes":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr , '\n'
}

# wait_running NODE N [SECONDS]: until NODE counts N running nodes in its
# cluster (the running_nodes of its cluster_status), up to SECONDS
# (TIMEOUT): one rabbitmqctl that waits, not one a poll.
wait_running() {
	if ! ctl "$1" await_online_nodes "$2" --timeout "${3:-$TIMEOUT}" >/dev/null 2>&1; then
		log "$1 did not count $2 running nodes within ${3:-$TIMEOUT}s:"
		ctl "$1" cluster_status >&2 || true
		exit 1
	fi
}

# boot_order: the stopped nodes' indexes, the one that stopped last first
# (3.10: start boots 4.3's at once). A clustered 3.10 node boots only once a peer that stopped after it is back
# (Mnesia waits for the newest copy of its tables), and rabbitmq.sh waits for
# each boot in turn under its lock, so the wrong order would hang. Each node's
# nodes_running_at_shutdown lists the nodes running when it went down; the
# last one down lists only itself. If none does (all crashed), the seed is
# told to boot from its own copy: this is a disposable test cluster.
boot_order() {
	local i first='' order=() f
	for i in "${!NODES[@]}"; do
		running "${NODES[i]}" && continue
		order+=("$i")
		f=$DIR/c$((i + 1))/mnesia/${NODES[i]}/nodes_running_at_shutdown
		if [[ -z $first && -f $f ]] && [[ $(tr -d " \n" <"$f") == "['${NODES[i]}']." ]]; then
			first=$i
		fi
	done
	((${#order[@]})) || return 0
	if [[ -z $first ]] && ((${#order[@]} == ${#NODES[@]})) &&
		[[ -f $DIR/c1/mnesia/$SEED/nodes_running_at_shutdown ]]; then
		log "no node stopped last (all crashed?); forcing $SEED to boot"
		: >"$DIR/c1/mnesia/$SEED/force_load" # what `rabbitmqctl force_boot` writes
		first=0
	fi
	[[ -n $first ]] && echo "$first"
	for i in "${order[@]}"; do [[ $i == "$first" ]] || echo "$i"; done
}

# fresh: no node has a data directory yet (a first start), so no boot order
# binds them.
fresh() {
	local i
	for i in "${!NODES[@]}"; do
		[[ -d $DIR/c$((i + 1))/mnesia ]] && return 1
	done
	return 0
}

start() {
	local t0=$SECONDS i node pids=()
	# A first start's three boots, and every 4.3 start's, at once (each
	# waits on its own lock): a Khepri node boots once a majority of its
	# members is up, whichever went down last, so one at a time would hang.
	if fresh || [[ $SERIES != 3.10 ]]; then
		for i in "${!NODES[@]}"; do
			node_sh "$i" start >/dev/null &
			pids+=("$!")
		done
		for i in "${!pids[@]}"; do
			wait "${pids[i]}" || { log "${NODES[i]} did not start"; exit 1; }
		done
	else
		for i in $(boot_order); do
			node_sh "$i" start >/dev/null
		done
	fi
	for i in "${!NODES[@]}"; do
		node=${NODES[i]}
		[[ $node == "$SEED" ]] && continue
		members "$node" | grep -qxF "$SEED" && continue
		log "joining $node to $SEED"
		ctl "$node" stop_app
		ctl "$node" reset # a fresh node's own guest user and vhost give way to the cluster's
		# join_cluster prints the node's boot logs on stderr; show them only on failure.
		ctl "$node" join_cluster "$SEED" 2>"$DIR/c$((i + 1))/log/join.log" ||
			{ cat "$DIR/c$((i + 1))/log/join.log" >&2; exit 1; }
		ctl "$node" start_app
	done
	wait_running "$SEED" "${#NODES[@]}"
	log "cluster of ${#NODES[@]} running after $((SECONDS - t0))s"
	for i in "${!NODES[@]}"; do echo "amqp://guest:guest@localhost:${PORTS[i]}/"; done
}

stop() {
	local i status=0
	# Seed last, so that it is the last one down and boots first next time;
	# every node, even if stopping one failed.
	for ((i = ${#NODES[@]} - 1; i >= 0; i--)); do node_sh "$i" stop || status=1; done
	return "$status"
}

# run CMD: the cluster around CMD; every node is stopped at the end, as
# stop does, ignoring further INT and TERM so that nothing cuts it short.
run() {
	local status=0
	[[ $# -gt 0 ]] || usage
	trap 'trap "" INT TERM; stop' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	start >/dev/null
	"$@" || status=$?
	exit "$status"
}

# pid_of NODE: the OS pid of NODE's beam.smp, from the pid file the node writes
# (checked against the process, whose command line lacks the node name but
# whose environment has it: a stale file may name a reused pid).
pid_of() {
	local i f pid
	i=$(index "$1")
	f=$DIR/c$((i + 1))/rabbit.pid
	[[ -f $f ]] || return 1
	pid=$(<"$f")
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */beam.smp ]] &&
		tr '\0' '\n' <"/proc/$pid/environ" | grep -qxF "RABBITMQ_NODENAME=$1" || return 1
	echo "$pid"
}

kill_node() {
	local pid t0=$SECONDS
	index "$1" >/dev/null # exits on an unknown name (pid_of's would not, in $(...))
	pid=$(pid_of "$1") || { log "$1 is not running"; return; }
	kill -KILL "$pid"
	# rabbitmq-server's wrapper shell reaps the VM, so /proc/$pid goes away.
	while [[ -e /proc/$pid ]]; do
		((SECONDS - t0 < 30)) || { log "pid $pid of $1 still there after SIGKILL"; exit 1; }
		sleep 0.1
	done
	log "killed $1 (pid $pid)"
}

# restart NODE: boot NODE, then wait until every other node that runs
# counts it running too (its peers, not just NODE itself, see it back).
restart() {
	local i t0=$SECONDS peer peers=()
	i=$(index "$1")
	node_sh "$i" start >/dev/null
	for peer in "${NODES[@]}"; do
		[[ $peer != "$1" ]] && running "$peer" && peers+=("$peer")
	done
	for peer in "${peers[@]}"; do
		wait_running "$peer" $((${#peers[@]} + 1)) $((TIMEOUT - (SECONDS - t0) > 1 ? TIMEOUT - (SECONDS - t0) : 1))
	done
	log "$1 back in the cluster after $((SECONDS - t0))s"
}

# leader QUEUE: list_queues' `leader` column (quorum queues only), asked of
# the first node that answers.
leader() {
	local node out
	for node in "${NODES[@]}"; do
		running "$node" || continue
		out=$(ctl "$node" list_queues -p / --no-table-headers name type leader) || continue
		awk -F'\t' -v q="$1" '
			function fail(msg) { print "cluster.sh: " msg > "/dev/stderr"; bad = 1; exit 1 }
			$1 == q { found = 1
				if ($2 != "quorum") fail(q " is a " $2 " queue, not a quorum queue")
				if ($3 == "") fail("quorum queue " q " has no leader right now")
				print $3 }
			END { if (!found && !bad) fail("no queue " q " in vhost /") }' <<<"$out"
		return
	done
	log "no node of the cluster is up"
	exit 1
}

usage() { echo "usage: $0 start|stop|run CMD...|kill NODE|restart NODE|leader QUEUE|ping NODE" >&2; exit 2; }

case ${1:-} in
start) start ;;
stop) stop ;;
run) shift; run "$@" ;;
kill) [[ $# == 2 ]] || usage; kill_node "$2" ;;
restart) [[ $# == 2 ]] || usage; restart "$2" ;;
leader) [[ $# == 2 ]] || usage; leader "$2" ;;
ping) [[ $# == 2 ]] || usage; up "$2" ;;
*) usage ;;
esac
