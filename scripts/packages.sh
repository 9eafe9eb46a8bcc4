#!/usr/bin/env bash
# packages.sh prints the packages of every module of go.work (./... stops at
# a nested module's go.mod), less the benchmark harness (bench/, tested on
# its own) and the tool pins (tools/): what make test, lint and fuzz check.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
mod=github.com/acemq-go/acemq
"$go" list "$mod/..." | grep -vE "^$mod/(bench|tools)(/|\$)"
