#!/usr/bin/env bash
# Real retry libraries against `herdsim serve`, each with its own
# configuration file, beside `herdsim run --import` of that same file
# (docs/src/studies/real-libraries.md). Each library is installed here, in a
# throwaway environment (a venv per Python library, a temporary npm folder
# for grpc-js, a temporary cargo project for tower), at the versions below;
# nothing is installed outside $TMP.
#
#   results/scripts/real_libraries.sh HERDSIM            # the committed table (about 20 minutes)
#   results/scripts/real_libraries.sh HERDSIM --quick    # CI: botocore 1.44, 2 runs of ~200 calls (under 2 minutes)
#
# HERDSIM is a herdsim binary with herdsim-live beside it. Live runs are not
# byte-identical from one run to the next: the machine's timing is in them.
set -euo pipefail
cd "$(dirname "$0")/../.."
herdsim=$(realpath "${1:?usage: real_libraries.sh HERDSIM [--quick]}")
mode=${2:-full}

GRPCIO=1.85.4
BOTOCORE_2_0=1.43.127
BOTOCORE_2026=1.44.18
GRPC_JS=1.14.7
TOWER=0.5.3 # pinned in results/scripts/libraries/tower_driver/Cargo.toml

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
venv() { # venv NAME PACKAGE...
    python3 -m venv "$tmp/$1"
    "$tmp/$1/bin/pip" install --quiet --disable-pip-version-check "${@:2}"
}

if [[ $mode == --quick ]]; then
    venv botocore144 "botocore==$BOTOCORE_2026"
    export BOTOCORE144_PYTHON=$tmp/botocore144/bin/python
    python3 results/scripts/real_libraries.py "$herdsim" "$tmp/quick" --libraries botocore-1.44 \
        --scenarios outage,partial-30 --reps 1 --seeds 4 --check --workdir "$tmp/work"
    exit
fi

venv grpcio "grpcio==$GRPCIO"
venv botocore143 "botocore==$BOTOCORE_2_0"
venv botocore144 "botocore==$BOTOCORE_2026"
export GRPCIO_PYTHON=$tmp/grpcio/bin/python
export BOTOCORE143_PYTHON=$tmp/botocore143/bin/python
export BOTOCORE144_PYTHON=$tmp/botocore144/bin/python
if command -v npm >/dev/null; then
    (cd "$tmp" && mkdir node && cd node && npm init -y >/dev/null &&
        npm install --silent --no-audit --no-fund "@grpc/grpc-js@$GRPC_JS" >/dev/null)
    export GRPCJS_NODE=$PWD/results/scripts/libraries/grpcjs_driver.js
    export NODE_PATH=$tmp/node/node_modules
fi
# tower's retry and TpsBudget (crates.io), built in a temporary cargo project
cp -r results/scripts/libraries/tower_driver "$tmp/tower"
cargo build --release --quiet --manifest-path "$tmp/tower/Cargo.toml"
export TOWER_DRIVER=$tmp/tower/target/release/herdsim-tower-driver
echo "load: $(uptime)"
python3 results/scripts/real_libraries.py "$herdsim" results/real-libraries --workdir "$tmp/work" \
    > results/real-libraries.md
echo "load: $(uptime)"
