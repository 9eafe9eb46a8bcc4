#!/usr/bin/env bash
# freeslot.sh SLOT: the first test slot from SLOT on (mod 100) none of whose
# ports listens on this machine: its 20 AMQP ports, their management ports
# (+10000) and Erlang distribution ports (+20000) (the Makefile's port
# plan). Two checkouts whose paths hash to one slot then run make test at
# once, the second a slot further; a slot in use by a checkout that has
# not started its nodes yet is not seen, which only a start in the same
# second can meet.
set -euo pipefail
start=$1
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for ((k = 0; k < 100; k++)); do
	slot=$(((start + k) % 100))
	port0=$((10000 + 20 * slot))
	taken=
	for ((p = port0; p < port0 + 20; p++)); do
		if listening "$p" || listening $((p + 10000)) || listening $((p + 20000)); then
			taken=$p
			break
		fi
	done
	if [ -z "$taken" ]; then
		echo "$slot"
		exit 0
	fi
	echo "freeslot.sh: slot $slot is taken (port $taken listens); trying the next" >&2
done
echo "freeslot.sh: no free test slot" >&2
exit 1
