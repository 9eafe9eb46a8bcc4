#!/usr/bin/env bash
# broker-packages.sh prints the packages whose tests reach a RabbitMQ node:
# those that import internal/testing/brokertest, directly or through another
# package. make test's RabbitMQ 4.0 part runs them again; the others' tests
# give the same result on any broker version, and ran in the 3.10 part.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
pkgs=$(GO="$go" bash scripts/packages.sh)
# shellcheck disable=SC2086 # one package per word
"$go" list -test -f '{{.ImportPath}} {{join .Deps " "}}' $pkgs |
	awk '/ github\.com\/acemq-go\/acemq\/internal\/testing\/brokertest( |$)/ {print $1}' |
	sed -E 's/\.test$//; s/_test$//' | sort -u |
	comm -12 - <(sort <<<"$pkgs")
