#!/usr/bin/env bash
# A three-node RabbitMQ cluster whose nodes each run in a network namespace
# of their own, so that the partition scenarios can cut the network between
# them (docs/reliability.md, "Network partitions").
#
#   scripts/netns-cluster.sh start      make the namespaces, the bridge and the
#                                       veths, start three fresh nodes, join
#                                       n2 and n3 to n1, print the AMQP URLs
#   scripts/netns-cluster.sh stop       stop every node, epmd and process in the
#                                       namespaces, delete the namespaces, the
#                                       veths and the bridge
#   scripts/netns-cluster.sh run CMD    start, run CMD with ACEMQ_NETNS_URLS,
#                                       ACEMQ_NETNS_NODES and ACEMQ_NETNS_LOGS
#                                       set, and stop when it ends (also when
#                                       it fails or the script is interrupted)
#   scripts/netns-cluster.sh cut NODE [--all | --from PEER[,PEER]]
#                                       --all (the default): NODE's veth down:
#                                       no peer and no client reaches it;
#                                       --from: NODE and each PEER drop what
#                                       they send each other (blackhole
#                                       routes), clients still reach all three
#   scripts/netns-cluster.sh heal       undo every cut, and wait until every
#                                       node lists the three as running; on
#                                       3.10, whose default partition handling
#                                       (ignore) keeps a partition until a node
#                                       restarts, restart the application of
#                                       the node cut off if it comes to that;
#                                       prints what it took
#   scripts/netns-cluster.sh leader QUEUE
#                                       the node hosting quorum queue QUEUE's
#                                       leader (vhost /), asked of the first
#                                       node that answers
#   scripts/netns-cluster.sh urls|nodes the AMQP URLs, the node names
#
# NODE and PEER are n1, n2, n3 or a node's full name. Everything is named
# after the checkout (TAG, as the Makefile's TEST_TAG: six hex digits of
# its path's cksum): namespaces acemq-TAG-n1..n3, bridge am-TAG, veths
# am-TAG-1..3. The addresses are 10.77.SLOT.0/24 (SLOT: ACEMQ_NETNS_SLOT,
# else ACEMQ_TEST_SLOT, else the cksum mod 100): node i at 10.77.SLOT.i, the
# bridge (the host's side, where the tests run) at 10.77.SLOT.254. Nothing
# outside this machine is ever addressed; a subnet already routed stops the
# start. Each node listens on 5672 (AMQP), 15672 (management) and 25672
# (Erlang distribution) at its own address, runs its own epmd in its
# namespace, and is named acemq-TAG-ni@10.77.SLOT.i (long names: the
# address is the host part, which every namespace reaches).
#
# ACEMQ_NETNS_SERIES picks RabbitMQ 3.10 (the default: the host's, Debian
# bookworm's) or 4.3 (Debian sid's, in the chroot scripts/rabbitmq.sh makes
# at ACEMQ_SID_ROOT). ACEMQ_NETNS_TICK is the nodes' net_ticktime (default
# 10 s, RabbitMQ's is 60 s): a node takes a silent peer for down after 0.75
# to 1.25 of it, so a cut of 20 s is "longer than the net tick" and the
# short run stays short; below 10 s a loaded two-core machine risks
# partitions nobody made. ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS, when set, is
# the nodes' dead_letter_worker_publisher_confirm_timeout. The nodes start
# from empty data directories each time (ROOT/.rabbitmq/netns/ni for 3.10,
# SID_ROOT/srv/acemq/netns-TAG-ni for 4.3). guest may log in from any
# address (loopback_users = none): the tests connect from the bridge's
# address, and nothing outside this machine reaches the namespaces.
#
# Needs root and iproute2 (installed with apt when missing); no iptables.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
HASH=$(printf %s "$ROOT" | cksum | cut -d' ' -f1)
TAG=${ACEMQ_NETNS_TAG:-t$(printf %06x $((HASH % 16777216)))}
SLOT=${ACEMQ_NETNS_SLOT:-${ACEMQ_TEST_SLOT:-$((HASH % 100))}}
SERIES=${ACEMQ_NETNS_SERIES:-3.10}
TICK=${ACEMQ_NETNS_TICK:-10}
TIMEOUT=${ACEMQ_RABBITMQ_TIMEOUT:-120} # seconds to wait for a node to boot or join
NET=10.77.$SLOT
HOST_IP=$NET.254
BRIDGE=am-$TAG
N=3
AMQP_PORT=5672 MGMT_PORT=15672 DIST_PORT=25672

log() { echo "netns-cluster.sh: $*" >&2; }

# shellcheck source=scripts/lib.sh
source scripts/lib.sh # from the root, where the script has gone (a relative $0 no longer leads there)

((SLOT >= 0 && SLOT <= 253)) || { log "slot $SLOT: the third octet of 10.77.SLOT.0/24 must be 0..253"; exit 2; }
[[ $(id -u) == 0 ]] || { log "needs root (network namespaces)"; exit 1; }
command -v ip >/dev/null || apt_install iproute2

HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
export HOME LC_ALL=C.UTF-8
case $SERIES in
3.10)
	[[ -d /usr/lib/rabbitmq/bin ]] || apt_install rabbitmq-server
	PATH=/usr/lib/rabbitmq/bin:$PATH
	IN=(env) # runs a RabbitMQ program
	DATA=$ROOT/.rabbitmq/netns
	ROOTFS=
	;;
4.3)
	ROOTFS=${ACEMQ_SID_ROOT:-/var/cache/acemq/sid}
	ROOTFS=${ROOTFS%/}
	[[ -x $ROOTFS/usr/lib/rabbitmq/bin/rabbitmq-server ]] ||
		{ log "no RabbitMQ 4.3 chroot at $ROOTFS: make it with ACEMQ_RABBITMQ_SERIES=4.3 scripts/rabbitmq.sh start (then stop)"; exit 1; }
	IN=(chroot "$ROOTFS" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 PATH=/usr/lib/rabbitmq/bin:/usr/sbin:/usr/bin:/sbin:/bin)
	DATA=$ROOTFS/srv/acemq/netns-$TAG
	;;
*) log "ACEMQ_NETNS_SERIES=$SERIES: use 3.10 or 4.3"; exit 2 ;;
esac

ns() { echo "acemq-$TAG-n$1"; }            # node i's namespace
veth() { echo "am-$TAG-$1"; }              # its veth's end on the bridge
ip_of() { echo "$NET.$1"; }                # its address
node() { echo "acemq-$TAG-n$1@$NET.$1"; } # its Erlang node name
dir() { echo "$DATA/n$1"; }                # its data directory, as the host sees it
node_dir() { local d; d=$(dir "$1"); echo "${d#"$ROOTFS"}"; } # as the node sees it
url() { echo "amqp://guest:guest@$(ip_of "$1"):$AMQP_PORT/"; }

# ctl I ARGS: rabbitmqctl ARGS against node I, from its namespace, bounded
# by CTL_TIMEOUT seconds (a node cut off does not answer).
CTL_TIMEOUT=60
ctl() { local i=$1; shift; timeout "$CTL_TIMEOUT" ip netns exec "$(ns "$i")" "${IN[@]}" "${CTL_ENV[@]}" rabbitmqctl -q -l -n "$(node "$i")" "$@"; }

# index NODE: 1..3 for n1..n3 or a node's full name.
index() {
	local i
	for ((i = 1; i <= N; i++)); do
		[[ $1 == "n$i" || $1 == "$(node "$i")" ]] && { echo "$i"; return; }
	done
	log "unknown node $1 (n1..n$N or $(node 1) ...)"
	exit 2
}

amqp_up() (
	exec 3<>"/dev/tcp/$(ip_of "$1")/$AMQP_PORT" || exit 1
	printf 'AMQP\0\0\x09\x01' >&3
	read -r -t 5 -N 1 -u 3 c || exit 1
	[[ $c == $'\x01' ]]
) 2>/dev/null
mgmt_up() ( exec 3<>"/dev/tcp/$(ip_of "$1")/$MGMT_PORT" ) 2>/dev/null

# The sid chroot's /proc is shared with scripts/rabbitmq.sh's 4.3 nodes:
# lock_rootfs, rootfs_in_use and release_rootfs are scripts/lib.sh's.

# leftovers: this checkout's bridge or namespaces exist (their names carry
# its tag) and no process runs in them: what a run whose stop could not
# finish left, which would refuse every later start.
leftovers() {
	local i found=
	ip link show "$BRIDGE" >/dev/null 2>&1 && found=yes
	for ((i = 1; i <= N; i++)); do
		ip netns list | grep -qw "$(ns "$i")" || continue
		[[ -z $(ip netns pids "$(ns "$i")") ]] || return 1
		found=yes
	done
	[[ -n $found ]]
}

# make_network: the bridge on the host, and for each node a namespace joined
# to it by a veth pair.
make_network() {
	local i
	if leftovers; then
		log "removing the namespaces and bridge an earlier run of this checkout left (no process runs in them)"
		stop
	fi
	if [[ -n $(ip -4 route show "$NET.0/24") ]] || ip link show "$BRIDGE" >/dev/null 2>&1; then
		log "$NET.0/24 or $BRIDGE is in use already: another cluster of this checkout (scripts/netns-cluster.sh stop), or of a checkout in slot $SLOT (set ACEMQ_NETNS_SLOT)"
		exit 1
	fi
	ip link add "$BRIDGE" type bridge
	ip addr add "$HOST_IP/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	for ((i = 1; i <= N; i++)); do
		ip netns add "$(ns "$i")"
		ip link add "$(veth "$i")" type veth peer name eth0 netns "$(ns "$i")"
		ip link set "$(veth "$i")" master "$BRIDGE" up
		ip -n "$(ns "$i")" addr add "$(ip_of "$i")/24" dev eth0
		ip -n "$(ns "$i")" link set eth0 up
		ip -n "$(ns "$i")" link set lo up
	done
}

# configure I: node I's files, in an empty data directory.
configure() {
	local d
	d=$(dir "$1")
	rm -rf "$d"
	mkdir -p "$d/log" "$d/mnesia"
	echo '[rabbitmq_management].' >"$d/enabled_plugins"
	cat >"$d/rabbitmq.conf" <<-EOF
		listeners.tcp.default = $AMQP_PORT
		management.tcp.port = $MGMT_PORT
		loopback_users = none
	EOF
	local rabbit=''
	[[ -z ${ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS:-} ]] ||
		rabbit=", {rabbit, [{dead_letter_worker_publisher_confirm_timeout, $ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS}]}"
	echo "[{kernel, [{net_ticktime, $TICK}]}$rabbit]." >"$d/advanced.config"
	: >"$d/rabbitmq-env.conf"
}

# launch I: node I's epmd and rabbitmq-server in its namespace, detached.
launch() {
	local i=$1 nd
	nd=$(node_dir "$i")
	ip netns exec "$(ns "$i")" epmd -daemon
	setsid ip netns exec "$(ns "$i")" "${IN[@]}" RABBITMQ_NODENAME="$(node "$i")" RABBITMQ_USE_LONGNAME=true \
		RABBITMQ_NODE_IP_ADDRESS="$(ip_of "$i")" RABBITMQ_NODE_PORT=$AMQP_PORT RABBITMQ_DIST_PORT=$DIST_PORT \
		RABBITMQ_MNESIA_BASE="$nd/mnesia" RABBITMQ_LOG_BASE="$nd/log" RABBITMQ_PID_FILE="$nd/rabbit.pid" \
		RABBITMQ_ENABLED_PLUGINS_FILE="$nd/enabled_plugins" RABBITMQ_CONFIG_FILE="$nd/rabbitmq.conf" \
		RABBITMQ_ADVANCED_CONFIG_FILE="$nd/advanced.config" RABBITMQ_CONF_ENV_FILE="$nd/rabbitmq-env.conf" \
		rabbitmq-server </dev/null >"$(dir "$i")/log/startup.log" 2>&1 8>&- &
}

# await I: until node I answers AMQP and management, and has booted.
await() {
	local i=$1 t0=$SECONDS
	until amqp_up "$i" && mgmt_up "$i"; do
		if ((SECONDS - t0 >= TIMEOUT)); then
			log "$(node "$i") did not come up within ${TIMEOUT}s; log tail:"
			tail -n 40 "$(dir "$i")/log/startup.log" "$(dir "$i")/log/$(node "$i").log" >&2 2>/dev/null || true
			exit 1
		fi
		sleep 0.5
	done
	ctl "$i" await_startup --timeout 60 >/dev/null
}

# counts I COUNT SECONDS: node I counts COUNT running nodes in its cluster
# (cluster_status's running_nodes) within SECONDS. One rabbitmqctl that
# waits, not one a poll: each is a VM of its own, a second or two of CPU.
counts() { CTL_TIMEOUT=$(($3 + 30)) ctl "$1" await_online_nodes "$2" --timeout "$3" >/dev/null 2>&1; }

# whole_within SECONDS: every node counts all N running within SECONDS.
whole_within() {
	local deadline=$((SECONDS + $1)) i
	for ((i = 1; i <= N; i++)); do
		counts "$i" "$N" $((deadline - SECONDS > 1 ? deadline - SECONDS : 1)) || return 1
	done
}

start() {
	local t0=$SECONDS i
	make_network
	[[ -z $ROOTFS ]] || { lock_rootfs; mountpoint -q "$ROOTFS/proc" || mount -t proc proc "$ROOTFS/proc"; }
	for ((i = 1; i <= N; i++)); do configure "$i"; launch "$i"; done
	if [[ -n $ROOTFS ]]; then # the nodes run in the chroot now: rootfs_in_use sees them
		until rootfs_in_use; do sleep 0.05; done
		unlock_rootfs
	fi
	for ((i = 1; i <= N; i++)); do await "$i"; done
	for ((i = 2; i <= N; i++)); do
		ctl "$i" stop_app
		ctl "$i" reset
		ctl "$i" join_cluster "$(node 1)" 2>"$(dir "$i")/log/join.log" || { cat "$(dir "$i")/log/join.log" >&2; exit 1; }
		ctl "$i" start_app
	done
	counts 1 "$N" $((TIMEOUT - (SECONDS - t0) > 1 ? TIMEOUT - (SECONDS - t0) : 1)) ||
		{ log "the cluster did not show $N running nodes within ${TIMEOUT}s"; exit 1; }
	log "RabbitMQ $SERIES cluster of $N in namespaces acemq-$TAG-n1..n$N ($NET.0/24, net_ticktime $TICK) running after $((SECONDS - t0))s"
	urls
}

# gone LINK: no such network device. remove_link LINK: deletes it, and
# succeeds when it is gone either way: deleting a namespace takes its end of
# a veth pair and so the pair, but the kernel may finish that after `ip
# netns del` returns, between a look and an `ip link del`.
gone() { ! ip link show "$1" >/dev/null 2>&1; }
remove_link() { gone "$1" || ip link del "$1" 2>/dev/null || gone "$1"; }

# stop: every process in the namespaces (the nodes, their epmds, whatever a
# CLI left), then the namespaces (which takes their veths), the bridge and
# the chroot's /proc. Each step runs even if one before failed; stop fails
# if any did.
stop() {
	local i pids t0 status=0
	for ((i = 1; i <= N; i++)); do
		ip netns list | grep -qw "$(ns "$i")" || continue
		pids=$(ip netns pids "$(ns "$i")")
		[[ -z $pids ]] && continue
		kill -TERM $pids 2>/dev/null || true
		t0=$SECONDS
		while [[ -n $(ip netns pids "$(ns "$i")") ]] && ((SECONDS - t0 < 20)); do sleep 0.2; done
		pids=$(ip netns pids "$(ns "$i")")
		[[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
		while [[ -n $(ip netns pids "$(ns "$i")") ]]; do sleep 0.1; done
	done
	for ((i = 1; i <= N; i++)); do
		if ip netns list | grep -qw "$(ns "$i")"; then ip netns del "$(ns "$i")" || status=1; fi
		remove_link "$(veth "$i")" || status=1
	done
	remove_link "$BRIDGE" || status=1
	release_rootfs || status=1
	if ((status == 0)); then
		log "stopped the cluster in acemq-$TAG-n1..n$N and removed its namespaces, veths and bridge"
	else
		log "stopped the cluster in acemq-$TAG-n1..n$N; removing a namespace, veth or the bridge failed (above)"
	fi
	return "$status"
}

run() {
	local status=0
	[[ $# -gt 0 ]] || usage
	trap 'trap "" INT TERM; stop' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	start >/dev/null
	ACEMQ_NETNS_URLS=$(urls | tr '\n' ' ') ACEMQ_NETNS_NODES=$(nodes | tr '\n' ' ') \
		ACEMQ_NETNS_LOGS=$(logs | tr '\n' ' ') "$@" || status=$?
	exit "$status"
}

urls() { local i; for ((i = 1; i <= N; i++)); do url "$i"; done; }
nodes() { local i; for ((i = 1; i <= N; i++)); do node "$i"; done; }
logs() { local i; for ((i = 1; i <= N; i++)); do echo "$(dir "$i")/log/$(node "$i").log"; done; }

cut() {
	local i j peer how=${2:---all}
	i=$(index "$1")
	case $how in
	--all)
		ip link set "$(veth "$i")" down
		log "cut $(node "$i") off from every peer and client"
		;;
	--from)
		[[ -n ${3:-} ]] || usage
		for peer in ${3//,/ }; do
			j=$(index "$peer")
			ip -n "$(ns "$i")" route add blackhole "$(ip_of "$j")/32"
			ip -n "$(ns "$j")" route add blackhole "$(ip_of "$i")/32"
		done
		log "cut $(node "$i") off from $3 (clients still reach it)"
		;;
	*) usage ;;
	esac
}

heal() {
	local i r
	for ((i = 1; i <= N; i++)); do
		ip link set "$(veth "$i")" up
		while read -r r; do
			[[ -n $r ]] && ip -n "$(ns "$i")" route del $r
		done < <(ip -n "$(ns "$i")" route show type blackhole)
	done
	log "healed every cut"
	recover
}

# partitioned_from I: the nodes node I records a partition with, as n1..n3
# (RabbitMQ 3.10's Mnesia keeps a partition after the network heals).
partitioned_from() {
	ctl "$1" eval 'rabbit_node_monitor:partitions().' 2>/dev/null | grep -o "acemq-$TAG-n[0-9]" | sed 's/.*-//' || true
}

# recover: waits, once the network is whole, for every node to count all
# as running again. RabbitMQ 4.3 has no partition handling left and
# rejoins by itself: up to TIMEOUT. 3.10's default (ignore) keeps a
# partition it recorded until a node restarts: after 2.5 net ticks the
# application of the node the others are partitioned from (the one cut
# off) is restarted, as RabbitMQ's documentation says to.
recover() {
	local t0=$SECONDS i victim wait=$((TICK * 5 / 2))
	[[ $SERIES == 3.10 ]] || wait=$TIMEOUT # 4.3 rejoins by itself, however long a loaded machine makes that
	if whole_within "$wait"; then
		echo "the cluster whole again $((SECONDS - t0))s after the heal"
		return
	fi
	[[ $SERIES == 3.10 ]] || { log "the cluster is not whole $((SECONDS - t0))s after the heal"; exit 1; }
	victim=$(for ((i = 1; i <= N; i++)); do partitioned_from "$i"; done | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
	[[ -n $victim ]] || { log "the cluster is not whole $((SECONDS - t0))s after the heal, and no node records a partition"; exit 1; }
	log "RabbitMQ still records a partition with $victim $((SECONDS - t0))s after the heal; restarting its application"
	i=$(index "$victim")
	# A partitioned 3.10 node can take minutes to stop its application on
	# a loaded machine, or answer noproc (seen: a stop_app past 60s);
	# start_app is what brings it back.
	CTL_TIMEOUT=$TIMEOUT ctl "$i" stop_app >/dev/null || log "stop_app on $victim failed (above); starting it anyway"
	CTL_TIMEOUT=$TIMEOUT ctl "$i" start_app >/dev/null
	t0=$SECONDS
	whole_within "$TIMEOUT" || { log "the cluster is not whole ${TIMEOUT}s after restarting $victim"; exit 1; }
	echo "RabbitMQ still recorded a partition with $victim: its application restarted, the cluster whole $((SECONDS - t0))s later"
}

# leader QUEUE: the node of quorum queue QUEUE's leader as the queue's
# record names it (list_queues waits on every queue of the cluster, and a
# partition can leave one unresponsive), asked of the first node that
# answers.
leader() {
	local i out q=${1//\"/}
	for ((i = 1; i <= N; i++)); do
		out=$(ctl "$i" eval "case rabbit_amqqueue:lookup(rabbit_misc:r(<<\"/\">>, queue, <<\"$q\">>)) of
			{ok, Q} -> case amqqueue:get_pid(Q) of {_, Node} when is_atom(Node) -> Node; _ -> amqqueue:get_type(Q) end;
			E -> E end." 2>/dev/null) || continue
		case $out in
		"'acemq-$TAG-"*) echo "${out//\'/}" ;;
		"{error,not_found}") log "no queue $1 in vhost /"; exit 1 ;;
		*) log "$1 is not a quorum queue: $out"; exit 1 ;;
		esac
		return
	done
	log "no node of the cluster answers"
	exit 1
}

usage() { echo "usage: $0 start|stop|run CMD...|cut NODE [--all|--from PEER,...]|heal|leader QUEUE|urls|nodes" >&2; exit 2; }

case ${1:-} in
start) start ;;
stop) stop ;;
run) shift; run "$@" ;;
cut) [[ $# -ge 2 ]] || usage; cut "$2" "${3:-}" "${4:-}" ;;
heal) heal ;;
leader) [[ $# == 2 ]] || usage; leader "$2" ;;
urls) urls ;;
nodes) nodes ;;
*) usage ;;
esac
