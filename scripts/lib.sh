# Shared by scripts/rabbitmq.sh, scripts/netns-cluster.sh and
# scripts/postgres.sh, which source it after defining their own log().

port_open() ( exec 3<>"/dev/tcp/127.0.0.1/$1" ) 2>/dev/null

# CTL_ENV: what rabbitmqctl runs with here. Its VM's schedulers do not
# busy-wait for work (+sbwt none, as Debian's nodes run): a CLI call spends
# most of its life waiting for the node, and make test makes a few hundred
# of them on a loaded machine (about 15% of a call's CPU on a quiet one).
CTL_ENV=(RABBITMQ_CTL_ERL_ARGS="+sbwt none +sbwtdcpu none +sbwtdio none")

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

# A RabbitMQ 4.x chroot's /proc (ROOTFS/proc) is shared by every node in it,
# rabbitmq.sh's and netns-cluster.sh's, other checkouts' too: mounted by the
# first, unmounted once no process runs in the chroot. Both happen under
# the lock ROOTFS.proc.lock (fd 8; rabbitmq.sh's node lock is fd 9), which
# a start holds from the mount until its node runs in the chroot, so that
# no release unmounts it between the two.
lock_rootfs() {
	exec 8>"$ROOTFS.proc.lock"
	flock -w 300 8 || { log "timed out waiting for the lock of $ROOTFS/proc"; exit 1; }
}
unlock_rootfs() { exec 8>&-; }

# rootfs_in_use: some process runs with the chroot as its root.
rootfs_in_use() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/root" 2>/dev/null) == "$ROOTFS" ]] && return 0
	done
	return 1
}

# release_rootfs: unmounts the chroot's /proc once no process runs in it
# (nothing when ROOTFS is empty: a host series).
release_rootfs() {
	[[ -n $ROOTFS ]] || return 0
	lock_rootfs
	if mountpoint -q "$ROOTFS/proc" && ! rootfs_in_use; then umount "$ROOTFS/proc"; fi
	unlock_rootfs
}
