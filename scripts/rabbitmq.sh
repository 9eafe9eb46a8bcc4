#!/usr/bin/env bash
# Start (default) or stop a local RabbitMQ node for AceMQ's integration tests.
#
#   scripts/rabbitmq.sh [start]   install Debian's rabbitmq-server if needed, start a
#                                 node (or reuse one already answering on the port),
#                                 print the AMQP URL
#   scripts/rabbitmq.sh stop      stop the node started by this script
#   scripts/rabbitmq.sh run CMD   start a node, run CMD with it, and stop the node
#                                 again if this run started it; exits as CMD does
#   scripts/rabbitmq.sh ctl ARG.. rabbitmqctl ARG... against the node
#
# RABBITMQ_NODENAME, RABBITMQ_NODE_PORT, ACEMQ_RABBITMQ_MGMT_PORT and
# ACEMQ_RABBITMQ_DIR choose the node, its ports and its data directory, so that
# `make test` runs a private node beside any other.
#
# The node runs as the current user (root on dev/CI machines), not through the
# Debian service: there is no systemd here, and the /usr/sbin wrappers would
# `su rabbitmq`, which cannot write a project-local data directory.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

PORT=${RABBITMQ_NODE_PORT:-5672}
MGMT_PORT=${ACEMQ_RABBITMQ_MGMT_PORT:-15672}
NODE=${RABBITMQ_NODENAME:-acemq@localhost} # @localhost: no dependence on the hostname resolving
DIR=${ACEMQ_RABBITMQ_DIR:-$ROOT/.rabbitmq} # gitignored; a fresh clone (CI) gets a fresh broker
TIMEOUT=${ACEMQ_RABBITMQ_TIMEOUT:-120}     # seconds to wait for the node to boot
URL="amqp://guest:guest@localhost:$PORT/"  # guest may log in from localhost only

# Erlang finds its cookie in $HOME; pin HOME to the user's real home so that
# rabbitmqctl run later from another shell (or CI) shares the node's cookie.
HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
export HOME LC_ALL=C.UTF-8 # Elixir CLI tools warn (and misbehave) under a non-UTF-8 locale

log() { echo "rabbitmq.sh: $*" >&2; }

# Debian puts the real scripts here; /usr/sbin only has wrappers that `su rabbitmq`
# (that user cannot write our data dir). Called again after a fresh install.
use_real_scripts() { if [[ -d /usr/lib/rabbitmq/bin ]]; then PATH=/usr/lib/rabbitmq/bin:$PATH; fi; }
use_real_scripts

# True if something on $PORT speaks AMQP: send the 0-9-1 protocol header and
# expect the first byte of a method frame (connection.start) back. Runs in a
# subshell because a failed `exec` redirection may end a non-interactive shell.
amqp_up() (
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" || exit 1
	printf 'AMQP\0\0\x09\x01' >&3
	read -r -t 5 -N 1 -u 3 c || exit 1
	[[ $c == $'\x01' ]]
) 2>/dev/null

port_open() ( exec 3<>"/dev/tcp/127.0.0.1/$1" ) 2>/dev/null

install_rabbitmq() {
	command -v rabbitmq-server >/dev/null && command -v rabbitmqctl >/dev/null && return
	[[ $(id -u) == 0 ]] || { log "rabbitmq-server is missing; run as root to install it"; exit 1; }
	log "installing rabbitmq-server with apt-get"
	local t0=$SECONDS
	# Keep the package's postinst from starting the system service (invoke-rc.d
	# honours policy-rc.d exit 101); only add the file if the image lacks one.
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q update
	apt-get -q install -y --no-install-recommends -o DPkg::Lock::Timeout=300 rabbitmq-server
	log "installed in $((SECONDS - t0))s"
	use_real_scripts
}

start() {
	# Serialise concurrent callers (parallel `make test`s): the loser then reuses.
	exec 9>/tmp/acemq-rabbitmq.lock
	flock -w 600 9 || { log "timed out waiting for another rabbitmq.sh"; exit 1; }
	if amqp_up; then
		log "reusing the broker already answering on port $PORT"
		echo "$URL"
		return
	fi
	install_rabbitmq
	mkdir -p "$DIR/log" "$DIR/mnesia"

	# Everything the node reads lives in $DIR, so /etc/rabbitmq is never consulted.
	echo '[rabbitmq_management].' >"$DIR/enabled_plugins"
	printf 'management.tcp.port = %s\n' "$MGMT_PORT" >"$DIR/rabbitmq.conf"
	: >"$DIR/rabbitmq-env.conf"
	export RABBITMQ_NODENAME=$NODE RABBITMQ_NODE_PORT=$PORT \
		RABBITMQ_MNESIA_BASE=$DIR/mnesia RABBITMQ_LOG_BASE=$DIR/log \
		RABBITMQ_PID_FILE=$DIR/rabbit.pid \
		RABBITMQ_ENABLED_PLUGINS_FILE=$DIR/enabled_plugins \
		RABBITMQ_CONFIG_FILE=$DIR/rabbitmq.conf \
		RABBITMQ_ADVANCED_CONFIG_FILE=$DIR/advanced.config \
		RABBITMQ_CONF_ENV_FILE=$DIR/rabbitmq-env.conf

	# Share the Debian service's cookie if root has none yet, so that both
	# /usr/sbin/rabbitmqctl (runs as user rabbitmq) and the real one can talk to the node.
	if [[ ! -e $HOME/.erlang.cookie && -r /var/lib/rabbitmq/.erlang.cookie ]]; then
		install -m 400 /var/lib/rabbitmq/.erlang.cookie "$HOME/.erlang.cookie"
	fi

	if port_open "$PORT"; then
		log "port $PORT is taken by something that does not speak AMQP"
		exit 1
	fi

	log "starting node $NODE (data in $DIR)"
	local t0=$SECONDS pid
	# setsid + redirected stdio: detach fully, so that no caller (make, CI) waits
	# on a pipe the broker still holds open (nor on the lock, fd 9).
	setsid rabbitmq-server </dev/null >"$DIR/log/startup.log" 2>&1 9>&- &
	pid=$!

	# The AMQP listener opens before plugins start; wait for management too.
	until amqp_up && port_open "$MGMT_PORT"; do
		if ! kill -0 "$pid" 2>/dev/null || ((SECONDS - t0 >= TIMEOUT)); then
			log "node did not come up within ${TIMEOUT}s (or exited); log tail:"
			tail -n 40 "$DIR/log/startup.log" "$DIR/log/$NODE.log" >&2 2>/dev/null || true
			kill "$pid" 2>/dev/null || true # don't leave a half-booted node behind
			exit 1
		fi
		sleep 0.5
	done
	# Checks that rabbitmqctl reaches the node (cookie) and that boot finished.
	rabbitmqctl -q -n "$NODE" await_startup --timeout 30 >/dev/null
	log "started in $((SECONDS - t0))s; management UI on http://localhost:$MGMT_PORT/"
	echo "$URL"
}

stop() {
	command -v rabbitmqctl >/dev/null || { log "rabbitmqctl not installed; nothing to stop"; return; }
	if ! rabbitmqctl -q -n "$NODE" ping >/dev/null 2>&1; then
		log "node $NODE is not running"
		return
	fi
	# Given the pid file, `stop` returns only once the OS process has exited
	# (absent if another checkout started the node; then it returns sooner).
	local pidfile=()
	[[ -f $DIR/rabbit.pid ]] && pidfile=("$DIR/rabbit.pid")
	rabbitmqctl -q -n "$NODE" stop "${pidfile[@]}" >/dev/null
	log "stopped $NODE"
}

# run starts a node (or reuses one), runs "$@", and stops the node only if
# it was this run that started it.
run() {
	local started=false status=0
	amqp_up || started=true
	start >/dev/null
	"$@" || status=$?
	if $started; then stop; fi
	return "$status"
}

case ${1:-start} in
start) start ;;
stop) stop ;;
run)
	shift
	[[ $# -gt 0 ]] || { echo "usage: $0 run COMMAND [ARG...]" >&2; exit 2; }
	run "$@"
	;;
ctl)
	shift
	exec rabbitmqctl -q -n "$NODE" "$@"
	;;
*) echo "usage: $0 [start|stop|run COMMAND...|ctl ARG...]" >&2; exit 2 ;;
esac
