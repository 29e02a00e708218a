#!/usr/bin/env bash
# Issue 37 item 5: AWS's 2026 retry change, tested (docs/src/studies/aws-2026.md).
# AWS says the SDKs' new retry behaviour of 2026 (a retry costs 14 tokens of
# the 500-token quota, a 50 ms base for errors and timeouts, x-amz-retry-after
# honoured) "helps outages resolve faster". These runs set the 2.0 behaviour
# against the 2026 one on the same services, loads, clients, triggers and
# seeds (scenarios/aws-2026/*.toml, 32 seeds a point), and
# results/scripts/aws_2026.py makes the tables of results/aws-2026.md.
#
# Writes results/aws-2026-*.csv and results/aws-2026.md; the --per-run sweeps
# the medians are read from go to a scratch directory, deleted at the end.
# By hand, from anywhere: results/scripts/aws_2026.sh [BINARY]
# (default target/release/herdsim; a relative BINARY is taken from the
# repository root). About 2 minutes 10 s on this project's 2-core machine
# (4 minutes 15 s of CPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-target/release/herdsim}
herdsim() { "$bin" "$@"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# 1. A full outage of 1, 2, 5 and 10 s: storms and recovery (120 s patience).
herdsim sweep scenarios/aws-2026/outage.toml --out results/aws-2026-outage.csv --force --quiet
herdsim sweep scenarios/aws-2026/outage.toml --per-run --out "$scratch/aws-2026-outage-runs.csv" --force --quiet
# The load the server sees while it is down: the same outage from t = 0, the
# run cut at its end (the load and the horizon), so that attempts per request
# counts the attempts sent during the outage by the requests made in it.
for length in 1 2 5 10; do
  herdsim sweep scenarios/aws-2026/outage.toml --trigger "outage@0s..${length}s" \
      --duration "${length}s" --horizon "${length}s" \
      --out "results/aws-2026-outage-during-${length}s.csv" --force --quiet
done

# 2. A partial failure of 10% and 30% of attempts: 10 s of it from t = 2 s
#    (storms and recovery), and 10 s of load with it throughout (success and
#    attempts per request, beside the exact 1 − p³ and 1 + p + p²).
herdsim sweep scenarios/aws-2026/partial.toml --out results/aws-2026-partial.csv --force --quiet
herdsim sweep scenarios/aws-2026/partial.toml --per-run --out "$scratch/aws-2026-partial-runs.csv" --force --quiet
herdsim sweep scenarios/aws-2026/partial.toml --trigger none --fail-rate 0.1,0.3 --duration 10s \
    --out results/aws-2026-partial-during.csv --force --quiet

# 3. A service that throttles (a 64-place queue): a 2 s stop, spike and
#    outage, standard and adaptive.
herdsim sweep scenarios/aws-2026/throttle.toml --out results/aws-2026-throttle.csv --force --quiet
herdsim sweep scenarios/aws-2026/throttle.toml --per-run --out "$scratch/aws-2026-throttle-runs.csv" --force --quiet

# 4. The 2026 backoff and the 2026 quota, each alone.
herdsim sweep scenarios/aws-2026/decompose.toml --out results/aws-2026-decompose.csv --force --quiet
herdsim sweep scenarios/aws-2026/decompose.toml --per-run --out "$scratch/aws-2026-decompose-runs.csv" --force --quiet

python3 results/scripts/aws_2026.py results "$scratch" > results/aws-2026.md
