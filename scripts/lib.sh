# Shared by scripts/rabbitmq.sh and scripts/postgres.sh, which source it after
# defining their own log().

port_open() ( exec 3<>"/dev/tcp/127.0.0.1/$1" ) 2>/dev/null

# apt_install PKG...: Debian packages on the host, keeping their postinst from
# starting a system service (invoke-rc.d honours policy-rc.d exit 101; the
# file is only added if the image lacks one).
apt_install() {
	[[ $(id -u) == 0 ]] || { log "$* missing; run as root to install"; exit 1; }
	log "installing $* with apt-get"
	local t0=$SECONDS apt_lock
	# One apt-get at a time among these scripts (make test's two broker
	# parts start at once): a second apt-get update fails on the lists' lock.
	exec {apt_lock}>/tmp/acemq-apt.lock
	flock -w 1800 "$apt_lock" || { log "timed out waiting for another apt-get"; exit 1; }
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q update >&2
	apt-get -q install -y --no-install-recommends -o DPkg::Lock::Timeout=300 "$@" >&2
	log "installed $* in $((SECONDS - t0))s"
	exec {apt_lock}>&-
}
