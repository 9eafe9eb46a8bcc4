#!/usr/bin/env bash
# Start (default) or stop a private PostgreSQL server for AceMQ's database
# tests (the SQL schema registry's).
#
#   scripts/postgres.sh [start]   install PostgreSQL if needed, start a server
#                                 (or reuse one already answering on the
#                                 port), print its URL
#   scripts/postgres.sh stop      stop the server started by this script
#   scripts/postgres.sh run CMD   start a server, run CMD with
#                                 ACEMQ_TEST_POSTGRES_URL set to its URL, and
#                                 stop the server again if this run started
#                                 it; exits as CMD does
#   scripts/postgres.sh psql ARG.. psql ARG... against the server's database
#
# The server is Debian's `postgresql` (bookworm: PostgreSQL 15), installed
# with apt-get when no initdb is found under /usr/lib/postgresql/*/bin
# (ACEMQ_POSTGRES_BIN names another directory), without the "main" cluster
# the package would make; never the Debian service. It listens on localhost
# only, on ACEMQ_POSTGRES_PORT (default 5433, beside a system server on
# 5432), with its unix socket in a private directory, and keeps everything
# under ACEMQ_POSTGRES_DIR (default .postgres/test, gitignored: a fresh
# clone gets a fresh server): data/, run/ (the socket) and log/. Its one
# role, acemq, a superuser, logs in without a password (trust, localhost
# only) to its database acemq. It is a test server: fsync and synchronous
# commits are off, so a crash of the machine may lose its data.
#
# PostgreSQL refuses to run as root, so as root the server runs as the
# system user ACEMQ_POSTGRES_USER (default postgres, which the Debian
# package creates; created here if missing) and its directory is that
# user's. A data directory that user cannot reach (a checkout under /root,
# say) is moved to /var/tmp/acemq-postgres/, and the script says so.
#
# ACEMQ_POSTGRES_LOCK is the file concurrent starts queue on (default
# /tmp/acemq-postgres.lock). A server answering on the port is reused only
# if it is the one of ACEMQ_POSTGRES_DIR (never another checkout's); `run`
# decides whether it started the server under that lock, and stops the
# server it started when its command ends, also when it fails or the script
# is interrupted (INT, TERM).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

PORT=${ACEMQ_POSTGRES_PORT:-5433}
DIR=${ACEMQ_POSTGRES_DIR:-$ROOT/.postgres/test}
[[ $DIR == /* ]] || DIR=$ROOT/$DIR
TIMEOUT=${ACEMQ_POSTGRES_TIMEOUT:-60} # seconds to wait for the server to start
ROLE=acemq
DB=acemq
URL="postgres://$ROLE@localhost:$PORT/$DB?sslmode=disable"

log() { echo "postgres.sh: $*" >&2; }

# pg_bin: the newest PostgreSQL's program directory, which Debian keeps off
# PATH (only wrappers that pick a cluster are on it).
pg_bin() {
	if [[ -n ${ACEMQ_POSTGRES_BIN:-} ]]; then
		[[ -x $ACEMQ_POSTGRES_BIN/initdb ]] && echo "$ACEMQ_POSTGRES_BIN"
		return
	fi
	local d
	for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
			echo "$d"
			return
		fi
	done
}

# True if something on $PORT speaks PostgreSQL: send an SSLRequest (length
# 8, code 80877103) and expect S or N back. Runs in a subshell because a
# failed `exec` redirection may end a non-interactive shell.
pg_up() (
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" || exit 1
	printf '\0\0\0\010\004\322\026\057' >&3
	read -r -t 5 -N 1 -u 3 c || exit 1
	[[ $c == S || $c == N ]]
) 2>/dev/null

# shellcheck source=scripts/lib.sh
source scripts/lib.sh # from the root, where the script has gone (a relative $0 no longer leads there)

BIN=$(pg_bin)
install_postgres() {
	[[ -n $BIN ]] && return
	[[ -z ${ACEMQ_POSTGRES_BIN:-} ]] || { log "no initdb in ACEMQ_POSTGRES_BIN=$ACEMQ_POSTGRES_BIN"; exit 1; }
	# The package's postinst would make (and try to start) a "main" cluster
	# this script never uses; a drop-in that postgresql-common reads (the
	# directory is no package's, so dpkg asks nothing) says not to.
	if [[ ! -e /etc/postgresql-common/createcluster.d/acemq.conf ]]; then
		mkdir -p /etc/postgresql-common/createcluster.d
		echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/acemq.conf
	fi
	apt_install postgresql
	BIN=$(pg_bin)
	[[ -n $BIN ]] || { log "installed postgresql, but found no initdb under /usr/lib/postgresql/*/bin"; exit 1; }
}

# AS runs a program as the server's user: root cannot run PostgreSQL.
AS=()
SERVER_USER=$(id -un)
if [[ $(id -u) == 0 ]]; then
	SERVER_USER=${ACEMQ_POSTGRES_USER:-postgres}
	AS=(runuser -u "$SERVER_USER" --)
fi

# as_server CMD...: CMD as the server's user, from /, which it can read
# whatever the caller's directory.
as_server() { (cd / && exec "${AS[@]}" "$@"); }

# prepare_dir: the data directory, made and given to the server's user; moved
# to /var/tmp when that user cannot reach the checkout.
prepare_dir() {
	if [[ $(id -u) == 0 ]] && ! id -u "$SERVER_USER" >/dev/null 2>&1; then
		log "creating the system user $SERVER_USER to run PostgreSQL (it refuses root)"
		useradd --system --user-group --home-dir /var/lib/postgresql --shell /usr/sbin/nologin "$SERVER_USER"
	fi
	mkdir -p "$DIR"
	if [[ ${#AS[@]} -gt 0 ]]; then
		chown "$SERVER_USER:" "$DIR"
		if ! as_server test -w "$DIR" -a -x "$DIR"; then
			local other
			other=/var/tmp/acemq-postgres/$(printf '%s' "$DIR" | cksum | cut -d' ' -f1)
			log "$SERVER_USER cannot reach $DIR; keeping the server's data in $other instead"
			rmdir "$DIR" 2>/dev/null || true
			DIR=$other
			mkdir -p "$DIR"
			chmod 755 /var/tmp/acemq-postgres
			chown "$SERVER_USER:" "$DIR"
		fi
	fi
	as_server mkdir -p "$DIR/log" "$DIR/run"
	chmod 700 "$DIR/run" # the socket is the server's user's (and root's) alone
}

# moved_dir: where prepare_dir put the data directory, for stop.
moved_dir() {
	local other
	other=/var/tmp/acemq-postgres/$(printf '%s' "$DIR" | cksum | cut -d' ' -f1)
	if [[ ! -d $DIR/data && -d $other/data ]]; then DIR=$other; fi
}

psql_() { "$BIN/psql" -X -q -h localhost -p "$PORT" -U "$ROLE" "$@"; }

start() {
	# Serialise concurrent callers (parallel `make test`s): the loser then reuses.
	exec 9>"${ACEMQ_POSTGRES_LOCK:-/tmp/acemq-postgres.lock}"
	flock -w 600 9 || { log "timed out waiting for another postgres.sh"; exit 1; }
	if pg_up; then
		# Reused only if it is this directory's server, not another
		# checkout's on a port derived alike.
		moved_dir
		if [[ -z $BIN || ! -d $DIR/data ]] || ! as_server "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
			log "port $PORT answers PostgreSQL, but not as the server of $DIR: another checkout's? stop it, or give this server another port (make test: ACEMQ_TEST_SLOT, docs/testing.md)"
			exit 1
		fi
		log "reusing the server already answering on port $PORT"
		echo "$URL"
		return
	fi
	install_postgres
	prepare_dir
	if port_open "$PORT"; then
		log "port $PORT is taken by something that does not speak PostgreSQL; stop it, or give this server another port (make test: ACEMQ_TEST_SLOT, docs/testing.md)"
		exit 1
	fi

	local t0=$SECONDS
	if [[ ! -s $DIR/data/PG_VERSION ]]; then
		# Made beside its place and renamed into it, so that an initdb cut
		# short is never taken for a finished one.
		rm -rf "$DIR/data.partial"
		as_server "$BIN/initdb" -D "$DIR/data.partial" -U "$ROLE" --auth=trust \
			--encoding=UTF8 --no-locale --no-sync >"$DIR/log/initdb.log" 2>&1 ||
			{ tail -n 20 "$DIR/log/initdb.log" >&2; log "initdb failed (log: $DIR/log/initdb.log)"; exit 1; }
		echo "include_if_exists = 'acemq.conf'" >>"$DIR/data.partial/postgresql.conf"
		mv "$DIR/data.partial" "$DIR/data"
	fi
	# Written at every start, so that a port or directory of this run wins.
	as_server tee "$DIR/data/acemq.conf" >/dev/null <<-EOF
		port = $PORT
		listen_addresses = 'localhost'
		unix_socket_directories = '$DIR/run'
		fsync = off
		synchronous_commit = off
		full_page_writes = off
	EOF

	log "starting PostgreSQL from $BIN on port $PORT (data in $DIR, as $SERVER_USER)"
	# setsid + redirected stdio: detach fully, so that no caller (make, CI)
	# waits on a pipe the server still holds open (nor on the lock, fd 9).
	STARTED=true
	if ! (cd / && exec setsid "${AS[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log/postgres.log" \
		-w -t "$TIMEOUT" start </dev/null >"$DIR/log/pg_ctl.log" 2>&1 9>&-); then
		log "the server did not start within ${TIMEOUT}s; log tail:"
		tail -n 40 "$DIR/log/pg_ctl.log" "$DIR/log/postgres.log" >&2 2>/dev/null || true
		as_server "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
		exit 1
	fi
	if [[ $(psql_ -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'") != 1 ]]; then
		psql_ -d postgres -c "CREATE DATABASE $DB"
	fi
	log "started $(psql_ -d "$DB" -tAc 'SHOW server_version' | cut -d' ' -f1) in $((SECONDS - t0))s: $URL"
	echo "$URL"
}

stop() {
	[[ -n $BIN ]] || { log "PostgreSQL is not installed; nothing to stop"; return; }
	moved_dir
	if [[ ! -d $DIR/data ]] || ! as_server "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
		log "no server of $DIR is running"
		return
	fi
	as_server "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t "$TIMEOUT" stop >/dev/null
	log "stopped the server of $DIR"
}

STARTED=false # set once this process starts the server (run stops it then)

# cleanup (run's EXIT trap) stops the server if this process started it,
# ignoring further INT and TERM so that nothing cuts the stop short.
cleanup() {
	trap '' INT TERM
	if $STARTED; then stop; fi
}

# run starts a server (or reuses this directory's), runs "$@" with its URL,
# and stops the server when the command ends (or fails, or the script is
# interrupted) only if it was this run that started it, as decided under
# the lock.
run() {
	local status=0
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	start >/dev/null
	exec 9>&- # the start is done: a nested run (make test's parts) reuses the server
	ACEMQ_TEST_POSTGRES_URL=$URL "$@" || status=$?
	exit "$status"
}

case ${1:-start} in
start) start ;;
stop) stop ;;
run)
	shift
	[[ $# -gt 0 ]] || { echo "usage: $0 run COMMAND [ARG...]" >&2; exit 2; }
	run "$@"
	;;
psql)
	shift
	[[ -n $BIN ]] || { log "PostgreSQL is not installed"; exit 1; }
	psql_ -d "$DB" "$@"
	;;
*) echo "usage: $0 [start|stop|run COMMAND...|psql ARG...]" >&2; exit 2 ;;
esac
