#!/usr/bin/env bash
# Start (default) or stop a local RabbitMQ node for AceMQ's integration tests.
#
#   scripts/rabbitmq.sh [start]   install RabbitMQ if needed, start a node (or
#                                 reuse one already answering on the port),
#                                 print the AMQP URL
#   scripts/rabbitmq.sh stop      stop the node started by this script
#   scripts/rabbitmq.sh run CMD   start a node, run CMD with it, and stop the node
#                                 again if this run started it; exits as CMD does
#   scripts/rabbitmq.sh run --no-lock CMD
#                                 the same, without holding the node's lock
#                                 while CMD runs, so that CMD may stop and
#                                 start the node itself (the chaos scenarios)
#   scripts/rabbitmq.sh ctl ARG.. rabbitmqctl ARG... against the node
#
# RABBITMQ_NODENAME, RABBITMQ_NODE_PORT, ACEMQ_RABBITMQ_MGMT_PORT and
# ACEMQ_RABBITMQ_DIR choose the node, its ports and its data directory, so that
# `make test` runs private nodes beside any other (the Makefile derives
# them from the checkout: docs/testing.md). The Erlang distribution port is
# RABBITMQ_DIST_PORT, else RabbitMQ's default, the AMQP port + 20000. A port
# taken by something else, or an AMQP port answered by a node other than
# RABBITMQ_NODENAME, stops the start with an error (never a reuse of another
# checkout's node). ACEMQ_RABBITMQ_LOCK is the file concurrent starts of the
# node queue on (default /tmp/acemq-rabbitmq-NODE.lock, one per node, which
# `run` holds for its whole command, so that no other `run` of this node
# stops it under it). `run` stops the node it started when its command
# ends, also when it fails or the script is interrupted (INT, TERM).
#
# ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS, when set, is the node's
# dead_letter_worker_publisher_confirm_timeout (RabbitMQ's default: 180000).
#
# ACEMQ_RABBITMQ_TLS_DIR, when set, adds an amqps:// listener on
# ACEMQ_RABBITMQ_TLS_PORT (default 5671) with the files `acemq certs` writes
# in that directory (ca_certificate.pem, server_certificate.pem,
# server_key.pem, copied into the node's data directory): the broker's
# certificate, and a client certificate checked against the CA when one is
# presented (the lines `acemq certs` prints). A node reused on the port
# must have been started with the same files.
#
# ACEMQ_RABBITMQ_SERIES chooses the RabbitMQ:
#   3.10 (default)  Debian bookworm's rabbitmq-server (3.10.8), installed on
#                   the host with apt-get.
#   4.0             Debian trixie's rabbitmq-server (4.0.5, Erlang 27), in a
#                   trixie chroot at ACEMQ_TRIXIE_ROOT (default
#                   /var/cache/acemq/trixie).
#   4.3             Debian sid's rabbitmq-server (4.3.6, Erlang 29), in a sid
#                   chroot at ACEMQ_SID_ROOT (default /var/cache/acemq/sid).
#                   The mirror's sid Release file is past its Valid-Until
#                   date, so apt in there runs with Check-Valid-Until=false.
#   A chroot is made with debootstrap from the Debian mirror the host's apt
#   sources name and reused once made. The host's packages and apt sources
#   are never touched (debootstrap itself is installed from bookworm). The
#   node runs as root inside the chroot, with /proc mounted there while a
#   node runs, its data directory at ROOT/srv/acemq/NODE
#   (ACEMQ_RABBITMQ_DIR, if set, must lie inside the chroot), registering
#   with the host's epmd.
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
SERIES=${ACEMQ_RABBITMQ_SERIES:-3.10}
TIMEOUT=${ACEMQ_RABBITMQ_TIMEOUT:-120}    # seconds to wait for the node to boot
URL="amqp://guest:guest@localhost:$PORT/" # guest may log in from localhost only
TLS_DIR=${ACEMQ_RABBITMQ_TLS_DIR:-}
TLS_PORT=${ACEMQ_RABBITMQ_TLS_PORT:-5671}
TLS_FILES=(ca_certificate.pem server_certificate.pem server_key.pem)
DIST_PORT=${RABBITMQ_DIST_PORT:-$((PORT + 20000))}
LOCK=${ACEMQ_RABBITMQ_LOCK:-/tmp/acemq-rabbitmq-$NODE.lock}
STARTED=false  # set once this process launches the node (run stops it then)
LAUNCHED_PID=  # the launched rabbitmq-server, until it answers

log() { echo "rabbitmq.sh: $*" >&2; }

# Erlang finds its cookie in $HOME; pin HOME to the user's real home so that
# rabbitmqctl run later from another shell (or CI) shares the node's cookie.
HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
export HOME LC_ALL=C.UTF-8 # Elixir CLI tools warn (and misbehave) under a non-UTF-8 locale

# Debian puts the real scripts here; /usr/sbin only has wrappers that `su rabbitmq`
# (that user cannot write our data dir). Called again after a fresh install.
use_real_scripts() { if [[ -d /usr/lib/rabbitmq/bin ]]; then PATH=/usr/lib/rabbitmq/bin:$PATH; fi; }

ROOTFS= # a chroot series sets it
case $SERIES in
3.10)
	DIR=${ACEMQ_RABBITMQ_DIR:-$ROOT/.rabbitmq} # gitignored; a fresh clone (CI) gets a fresh broker
	NODE_DIR=$DIR                              # the data directory as the node sees it
	IN_NODE=(env)                              # runs a RabbitMQ program (rabbitmq-server, rabbitmqctl)
	use_real_scripts
	;;
4.0 | 4.3)
	if [[ $SERIES == 4.0 ]]; then
		SUITE=trixie ROOTFS=${ACEMQ_TRIXIE_ROOT:-/var/cache/acemq/trixie}
	else
		SUITE=sid ROOTFS=${ACEMQ_SID_ROOT:-/var/cache/acemq/sid}
	fi
	ROOTFS=${ROOTFS%/}
	DIR=${ACEMQ_RABBITMQ_DIR:-$ROOTFS/srv/acemq/$NODE}
	[[ $DIR == "$ROOTFS"/* ]] || { log "ACEMQ_RABBITMQ_DIR=$DIR: a $SERIES node's data directory must be inside $ROOTFS"; exit 2; }
	NODE_DIR=${DIR#"$ROOTFS"}
	# Inside the chroot, with a clean environment: only what is passed as
	# NAME=VALUE words before the program.
	IN_NODE=(chroot "$ROOTFS" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 PATH=/usr/lib/rabbitmq/bin:/usr/sbin:/usr/bin:/sbin:/bin)
	;;
*) log "ACEMQ_RABBITMQ_SERIES=$SERIES: use 3.10 (Debian bookworm's, on the host), 4.0 (Debian trixie's, in a chroot) or 4.3 (Debian sid's, in a chroot)"; exit 2 ;;
esac

ctl() { "${IN_NODE[@]}" "${CTL_ENV[@]}" rabbitmqctl -q -n "$NODE" "$@"; }

# True if something on $PORT speaks AMQP: send the 0-9-1 protocol header and
# expect the first byte of a method frame (connection.start) back. Runs in a
# subshell because a failed `exec` redirection may end a non-interactive shell.
amqp_up() (
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" || exit 1
	printf 'AMQP\0\0\x09\x01' >&3
	read -r -t 5 -N 1 -u 3 c || exit 1
	[[ $c == $'\x01' ]]
) 2>/dev/null

# tls_up: no TLS listener is asked for, or its port is open.
tls_up() { [[ -z $TLS_DIR ]] || port_open "$TLS_PORT"; }

# same_tls: the node's copies of the TLS files are those of $TLS_DIR.
same_tls() {
	local f
	for f in "${TLS_FILES[@]}"; do cmp -s "$TLS_DIR/$f" "$DIR/tls/$f" || return 1; done
}

# configure_tls copies the TLS files into the node's data directory (a
# chroot's node sees only its chroot) and adds the listener to rabbitmq.conf: the
# lines `acemq certs` prints, on TLS_PORT.
configure_tls() {
	local f
	for f in "${TLS_FILES[@]}"; do
		[[ -r $TLS_DIR/$f ]] || { log "ACEMQ_RABBITMQ_TLS_DIR=$TLS_DIR has no $f; make the files with: go run ./cmd/acemq certs --out $TLS_DIR"; exit 2; }
	done
	rm -rf "$DIR/tls"
	mkdir -m 700 "$DIR/tls"
	for f in "${TLS_FILES[@]}"; do cp "$TLS_DIR/$f" "$DIR/tls/$f"; done
	cat >>"$DIR/rabbitmq.conf" <<-EOF
		listeners.ssl.default = $TLS_PORT
		ssl_options.cacertfile = $NODE_DIR/tls/ca_certificate.pem
		ssl_options.certfile = $NODE_DIR/tls/server_certificate.pem
		ssl_options.keyfile = $NODE_DIR/tls/server_key.pem
		ssl_options.verify = verify_peer
		ssl_options.fail_if_no_peer_cert = false
	EOF
}

# shellcheck source=scripts/lib.sh
source scripts/lib.sh # from the root, where the script has gone (a relative $0 no longer leads there)

install_rabbitmq() {
	command -v rabbitmq-server >/dev/null && command -v rabbitmqctl >/dev/null && return
	apt_install rabbitmq-server
	use_real_scripts
}

# debian_mirror: the Debian archive the host's apt sources name (deb822
# .sources files or one-line sources.list), the one that serves bookworm
# itself rather than its security updates. ACEMQ_DEBIAN_MIRROR overrides it.
debian_mirror() {
	if [[ -n ${ACEMQ_DEBIAN_MIRROR:-} ]]; then echo "$ACEMQ_DEBIAN_MIRROR"; return; fi
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		uri=$(awk '
			/^[[:space:]]*$/ { if (deb && suite) { print uri; exit } deb = suite = 0; uri = "" }
			tolower($1) == "types:" && / deb( |$)/ { deb = 1 }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == "bookworm") suite = 1 }
			END { if (deb && suite) print uri }' "$f" | head -n 1)
		[[ -n $uri ]] && { echo "$uri"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r $f ]] || continue
		uri=$(awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++; if ($(i + 1) == "bookworm") { print $i; exit } }' "$f")
		[[ -n $uri ]] && { echo "$uri"; return; }
	done
	log "no Debian bookworm mirror in the host's apt sources; set ACEMQ_DEBIAN_MIRROR"
	exit 1
}

# install_rootfs makes the SUITE chroot with rabbitmq-server in it, unless
# it is there already. It is built beside its final place and renamed into
# it, so that a build cut short is never taken for a finished one.
install_rootfs() {
	[[ -x $ROOTFS/usr/lib/rabbitmq/bin/rabbitmq-server ]] && return
	[[ $(id -u) == 0 ]] || { log "the RabbitMQ $SERIES chroot $ROOTFS is missing; run as root to make it"; exit 1; }
	# One maker at a time (two checkouts' first runs may need it at once);
	# the one that waited finds it made.
	local make_lock
	mkdir -p "$(dirname "$ROOTFS")" # the lock's directory too, on a machine's first run
	exec {make_lock}>"$ROOTFS.make.lock"
	flock -w 1800 "$make_lock" || { log "timed out waiting for another rabbitmq.sh making $ROOTFS"; exit 1; }
	[[ -x $ROOTFS/usr/lib/rabbitmq/bin/rabbitmq-server ]] && { exec {make_lock}>&-; return; }
	command -v debootstrap >/dev/null || apt_install debootstrap
	local mirror t0=$SECONDS tmp=$ROOTFS.partial
	mirror=$(debian_mirror)
	log "making a Debian $SUITE chroot with rabbitmq-server in $ROOTFS (mirror $mirror)"
	rm -rf "$tmp"
	debootstrap --variant=minbase "$SUITE" "$tmp" "$mirror" >"$tmp.log" 2>&1 ||
		{ tail -n 20 "$tmp.log" >&2; log "debootstrap failed (log: $tmp.log)"; exit 1; }
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod +x "$tmp/usr/sbin/policy-rc.d"
	chroot "$tmp" /usr/bin/env -i DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c 'apt-get -q -o Acquire::Check-Valid-Until=false update && apt-get -q install -y --no-install-recommends rabbitmq-server && apt-get clean' \
		>>"$tmp.log" 2>&1 || { tail -n 20 "$tmp.log" >&2; log "installing rabbitmq-server in the chroot failed (log: $tmp.log)"; exit 1; }
	mv "$tmp" "$ROOTFS"
	rm -f "$tmp.log"
	log "made $ROOTFS in $((SECONDS - t0))s ($(du -sh "$ROOTFS" | cut -f1))"
	exec {make_lock}>&-
}

# lock_rootfs, unlock_rootfs, rootfs_in_use, release_rootfs: scripts/lib.sh.

# prepare_rootfs (under lock_rootfs): what a node in the chroot needs:
# /etc/hosts, /proc (the memory monitor reads it) and the host's epmd,
# which the host's 3.10 nodes share, started from the host when the host
# has one.
prepare_rootfs() {
	mountpoint -q "$ROOTFS/proc" || mount -t proc proc "$ROOTFS/proc"
	# Erlang resolves the node's host, localhost; sid's minbase has no
	# /etc/hosts (trixie's has), and without one the node stops at boot.
	[[ -s $ROOTFS/etc/hosts ]] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost\n' >"$ROOTFS/etc/hosts"
	if command -v epmd >/dev/null; then epmd -daemon; fi
}


# port_free PORT WHAT: exits with an error when something listens on PORT.
port_free() {
	if port_open "$1"; then
		log "port $1 ($2 of node $NODE) is taken by something else; stop it, or give this node other ports (make test: ACEMQ_TEST_SLOT, docs/testing.md)"
		exit 1
	fi
}

start() {
	# Serialise concurrent callers of this node: the loser then reuses it.
	exec 9>"$LOCK"
	flock -w 600 9 || { log "timed out waiting for another rabbitmq.sh of $NODE ($LOCK)"; exit 1; }
	if amqp_up; then
		# Reused only if it is this node (by name: a node of another
		# checkout on a port derived alike is not).
		if ! ctl ping >/dev/null 2>&1; then
			log "port $PORT answers AMQP, but not as node $NODE: another checkout's node? stop it, or give this node other ports (make test: ACEMQ_TEST_SLOT, docs/testing.md)"
			exit 1
		fi
		if [[ -n $TLS_DIR ]] && ! same_tls; then
			log "the node on port $PORT was not started with the TLS files of $TLS_DIR; stop it first (scripts/rabbitmq.sh stop, with this environment)"
			exit 1
		fi
		log "reusing the broker already answering on port $PORT"
		echo "$URL"
		return
	fi
	if [[ -n ${ROOTFS:-} ]]; then
		install_rootfs
		lock_rootfs
		prepare_rootfs
	else
		install_rabbitmq
	fi
	mkdir -p "$DIR/log" "$DIR/mnesia"

	# Everything the node reads lives in $DIR, so /etc/rabbitmq is never consulted.
	echo '[rabbitmq_management].' >"$DIR/enabled_plugins"
	printf 'management.tcp.port = %s\n' "$MGMT_PORT" >"$DIR/rabbitmq.conf"
	if [[ -n $TLS_DIR ]]; then configure_tls; else rm -rf "$DIR/tls"; fi
	# How long an at-least-once dead letter waits for its target's confirm
	# before RabbitMQ sends it again (180000 ms by default): the test nodes
	# shorten it so that a test sees a kept dead letter arrive in seconds.
	if [[ -n ${ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS:-} ]]; then
		printf '[{rabbit, [{dead_letter_worker_publisher_confirm_timeout, %d}]}].\n' \
			"$ACEMQ_RABBITMQ_DEAD_LETTER_RETRY_MS" >"$DIR/advanced.config"
	else
		rm -f "$DIR/advanced.config"
	fi
	: >"$DIR/rabbitmq-env.conf"
	local env=(RABBITMQ_NODENAME="$NODE" RABBITMQ_NODE_PORT="$PORT"
		RABBITMQ_MNESIA_BASE="$NODE_DIR/mnesia" RABBITMQ_LOG_BASE="$NODE_DIR/log"
		RABBITMQ_PID_FILE="$NODE_DIR/rabbit.pid"
		RABBITMQ_ENABLED_PLUGINS_FILE="$NODE_DIR/enabled_plugins"
		RABBITMQ_CONFIG_FILE="$NODE_DIR/rabbitmq.conf"
		RABBITMQ_ADVANCED_CONFIG_FILE="$NODE_DIR/advanced.config"
		RABBITMQ_CONF_ENV_FILE="$NODE_DIR/rabbitmq-env.conf")
	env+=(RABBITMQ_DIST_PORT="$DIST_PORT")

	# Share the Debian service's cookie if root has none yet, so that both
	# /usr/sbin/rabbitmqctl (runs as user rabbitmq) and the real one can talk to the node.
	if [[ $SERIES == 3.10 && ! -e $HOME/.erlang.cookie && -r /var/lib/rabbitmq/.erlang.cookie ]]; then
		install -m 400 /var/lib/rabbitmq/.erlang.cookie "$HOME/.erlang.cookie"
	fi

	port_free "$PORT" "the AMQP port"
	port_free "$MGMT_PORT" "the management port"
	port_free "$DIST_PORT" "the Erlang distribution port"
	[[ -z $TLS_DIR ]] || port_free "$TLS_PORT" "the amqps:// port"

	log "starting RabbitMQ $SERIES node $NODE (data in $DIR)"
	local t0=$SECONDS pid
	# setsid + redirected stdio: detach fully, so that no caller (make, CI) waits
	# on a pipe the broker still holds open (nor on the locks, fds 8 and 9).
	setsid "${IN_NODE[@]}" "${env[@]}" rabbitmq-server </dev/null >"$DIR/log/startup.log" 2>&1 9>&- 8>&- &
	pid=$! LAUNCHED_PID=$! STARTED=true
	if [[ -n ${ROOTFS:-} ]]; then
		# Once it runs in the chroot, rootfs_in_use sees it: /proc stays.
		until [[ $(readlink "/proc/$pid/root" 2>/dev/null) == "$ROOTFS" ]] || ! kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
		unlock_rootfs
	fi

	# The AMQP listener opens before plugins start; wait for management
	# (and the TLS listener) too.
	until amqp_up && port_open "$MGMT_PORT" && tls_up; do
		if ! kill -0 "$pid" 2>/dev/null || ((SECONDS - t0 >= TIMEOUT)); then
			log "node did not come up within ${TIMEOUT}s (or exited); log tail:"
			tail -n 40 "$DIR/log/startup.log" "$DIR/log/$NODE.log" >&2 2>/dev/null || true
			exit 1 # on_exit stops a half-booted node
		fi
		sleep 0.5
	done
	# Checks that rabbitmqctl reaches the node (cookie) and that boot finished.
	ctl await_startup --timeout 30 >/dev/null
	LAUNCHED_PID=
	# The version from the node's log, not `rabbitmqctl version` (a VM more).
	local version
	version=$(grep -o 'Starting RabbitMQ [^ ]*' "$DIR/log/$NODE.log" 2>/dev/null | tail -n 1 | cut -d' ' -f3)
	log "started RabbitMQ ${version:-$SERIES} in $((SECONDS - t0))s; management UI on http://localhost:$MGMT_PORT/${TLS_DIR:+; amqps:// on port $TLS_PORT}"
	echo "$URL"
}

stop() {
	if [[ -n ${ROOTFS:-} ]]; then
		[[ -x $ROOTFS/usr/lib/rabbitmq/bin/rabbitmqctl ]] || { log "no RabbitMQ $SERIES chroot at $ROOTFS; nothing to stop"; return; }
		mountpoint -q "$ROOTFS/proc" || { log "node $NODE is not running"; return; }
	else
		command -v rabbitmqctl >/dev/null || { log "rabbitmqctl not installed; nothing to stop"; return; }
	fi
	if ! ctl ping >/dev/null 2>&1; then
		log "node $NODE is not running"
		[[ -z ${ROOTFS:-} ]] || release_rootfs
		return 0
	fi
	# Given the pid file, `stop` returns only once the OS process has exited
	# (absent if another checkout started the node; then it returns sooner).
	local pidfile=()
	[[ -f $DIR/rabbit.pid ]] && pidfile=("$NODE_DIR/rabbit.pid")
	ctl stop "${pidfile[@]}" >/dev/null
	log "stopped $NODE"
	[[ -n ${ROOTFS:-} ]] && release_rootfs
	return 0
}

# on_exit (the EXIT trap) ignores further INT and TERM (a make passes its
# TERM on, a terminal's Ctrl-C reaches the whole group), so that nothing cuts
# it short, and stops what must not outlive this script: a node it launched
# that has not finished booting (interrupted, or failed to boot: it gets a
# TERM, which rabbitmq-server passes on to the VM), and in `run` the node it
# started.
RUN=false
on_exit() {
	trap '' INT TERM
	if [[ -n $LAUNCHED_PID ]] && kill -0 "$LAUNCHED_PID" 2>/dev/null; then
		kill -TERM "$LAUNCHED_PID" 2>/dev/null || true
		local t0=$SECONDS
		while kill -0 "$LAUNCHED_PID" 2>/dev/null && ((SECONDS - t0 < 60)); do sleep 0.2; done
		log "stopped $NODE, which had not finished booting"
		unlock_rootfs
		[[ -z ${ROOTFS:-} ]] || release_rootfs
	elif $RUN && $STARTED; then
		stop
	fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run starts a node (or reuses one), runs "$@", and stops the node when the
# command ends (or fails, or the script is interrupted) only if it was this
# run that started it: decided under the node's lock, which it keeps until
# the end (unless --no-lock), so that no other run of the same node stops
# it under it.
run() {
	local status=0 keep_lock=true
	if [[ ${1:-} == --no-lock ]]; then keep_lock=false; shift; fi
	[[ $# -gt 0 ]] || { echo "usage: $0 run [--no-lock] COMMAND [ARG...]" >&2; exit 2; }
	RUN=true
	start >/dev/null
	$keep_lock || exec 9>&-
	"$@" || status=$?
	exit "$status"
}

case ${1:-start} in
start) start ;;
stop) stop ;;
run)
	shift
	run "$@"
	;;
ctl)
	shift
	ctl "$@"
	;;
*) echo "usage: $0 [start|stop|run [--no-lock] COMMAND...|ctl ARG...]" >&2; exit 2 ;;
esac
