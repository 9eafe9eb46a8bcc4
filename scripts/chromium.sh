#!/usr/bin/env bash
# Headless Chromium for the console's browser tests (make test):
#
#   scripts/chromium.sh path    print the browser's path, installing Debian's
#                               `chromium` package first when it is missing
#
# Nothing is started here: each browser test starts its own headless
# Chromium with a fresh profile directory and stops it when it ends
# (internal/testing/browsertest).
set -euo pipefail

cd "$(dirname "$0")/.."

log() { echo "chromium.sh: $*" >&2; }

# shellcheck source=lib.sh
source scripts/lib.sh

find_chromium() { command -v chromium || command -v chromium-browser || true; }

case "${1:-}" in
path)
	bin=$(find_chromium)
	if [[ -z $bin ]]; then
		apt_install chromium fonts-dejavu-core
		bin=$(find_chromium)
	fi
	[[ -n $bin ]] || { log "no chromium after installing it"; exit 1; }
	echo "$bin"
	;;
*)
	echo "usage: scripts/chromium.sh path" >&2
	exit 2
	;;
esac
