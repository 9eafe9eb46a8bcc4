#!/usr/bin/env bash
# cputime.sh LABEL CMD...: runs CMD, then prints "LABEL took Ns" and the CPU
# seconds CMD used with everything it started. make test prints this for
# each part: its parts share the machine's cores, so a part's CPU, not its
# time, is what it costs the others.
#
# CMD runs in a cgroup of its own (cgroup v2, or v1's cpuacct), because the
# nodes and servers a part starts run in sessions of their own, outside its
# process tree, and a cgroup keeps them. Where no cgroup can be made (not
# root, no cgroup file system) it prints the time alone. A process still in
# the cgroup after CMD (something CMD started and did not stop) is named.
# Exits with CMD's status.
set -uo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 LABEL CMD..." >&2; exit 2; }
label=$1
shift

group=
for base in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/cpuacct; do
	if [[ -f $base/cpu.stat && -w $base/cgroup.procs ]]; then # v2: cpu.stat is in every cgroup
		usage() { awk '$1 == "usage_usec" {printf "%.0f\n", $2 * 1000}' "$group/cpu.stat"; }
	elif [[ -f $base/cpuacct.usage && -w $base/cgroup.procs ]]; then
		usage() { cat "$group/cpuacct.usage"; }
	else
		continue
	fi
	for g in "$base"/acemq-cputime-*; do rmdir "$g" 2>/dev/null; done # empty ones left by earlier runs
	group=$base/acemq-cputime-$$
	if mkdir "$group" 2>/dev/null && echo $$ >"$group/cgroup.procs" 2>/dev/null; then break; fi
	rmdir "$group" 2>/dev/null
	group=
done

t0=$SECONDS
"$@"
status=$?
took="$label took $((SECONDS - t0))s"
if [[ -z $group ]]; then
	echo "$took"
	exit "$status"
fi
ns=$(usage)
echo $$ >"$(dirname "$group")/cgroup.procs"
if [[ $ns =~ ^[0-9]+$ ]]; then echo "$took, $(((ns + 500000000) / 1000000000)) CPU-seconds"; else echo "$took"; fi
if ! rmdir "$group" 2>/dev/null; then
	echo "$label: still running after it: $(xargs -r ps -o pid=,args= -p <"$group/cgroup.procs" | tr '\n' ';')"
fi
exit "$status"
