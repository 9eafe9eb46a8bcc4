#!/usr/bin/env bash
# promtool for the checks of dashboards/ (make rules):
#
#   scripts/promtool.sh ARG...   run promtool ARG..., installing it first
#                                when it is missing
#
# promtool comes with Debian's `prometheus` package (bookworm: 2.42), installed
# with apt-get when no promtool is on PATH; never its service, which the
# package would otherwise start (apt_install, scripts/lib.sh).
set -euo pipefail

cd "$(dirname "$0")/.."

log() { echo "promtool.sh: $*" >&2; }

# shellcheck source=lib.sh
source scripts/lib.sh

command -v promtool >/dev/null || apt_install prometheus
promtool "$@"
