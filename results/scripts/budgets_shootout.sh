#!/usr/bin/env bash
# The retry-budget shoot-out (docs/src/studies/budgets.md): tunes every budget
# to the same full-outage bound (1.2×) as one client and as a fleet of 1,000
# clients, compares the tuned settings under six triggers at ρ = 0.5 to 0.9,
# and at 2 workers, draws the pictures and writes results/budgets-shootout.md.
# Run from the repository root: results/scripts/budgets_shootout.sh [HERDSIM]
set -euo pipefail
H=${1:-target/release/herdsim}
S=scenarios/budgets/service.toml

# 1. Tune each budget (the `best` row of each CSV: the most success within the bound).
for mode in client fleet; do
  if [ "$mode" = fleet ]; then F=(--sources 1000); else F=(); fi
  for c in envoy tower finagle grpc ratio; do
    "$H" tune "$S" "${F[@]}" --control "$c" -o "results/budgets-tune-$c-$mode.csv" --force -q >/dev/null
  done
  # Yandex's earned tokens: the default grid (capacity 300 up) cannot reach the
  # bound as a fleet, so the capacity goes down to one retry (100) and below.
  "$H" tune "$S" "${F[@]}" --control earned --param earned=99,100,150,200,300,1000,3000,10000 \
    --param deposit=1,10,50 -o "results/budgets-tune-earned-$mode.csv" --force -q >/dev/null
  # The AWS quota: capacity varied, the costs of each behaviour fixed. This
  # service never rejects (no queue limit), so throttle-cost never applies;
  # timeout-cost:14 is what 2026's single cost means for a timeout.
  "$H" tune "$S" "${F[@]}" --control tokens --param tokens=1,5,10,20,50,100,200,500,1000,5000 \
    --param cost=5 --param timeout-cost=10 -o "results/budgets-tune-aws2-$mode.csv" --force -q >/dev/null
  "$H" tune "$S" "${F[@]}" --control tokens --param tokens=1,5,14,20,50,100,200,500,1000,5000 \
    --param cost=14 --param timeout-cost=14 --param throttle-cost=5 \
    -o "results/budgets-tune-aws2026-$mode.csv" --force -q >/dev/null
done
rm -f results/budgets-tune-*.csv.runs

# 2. The tuned settings (budgets_shootout.py checks them against the tune CSVs).
CLIENT='none;envoy:0.05,min:10;tower:1,ttl:10s,min:3;finagle:0.14,ttl:10s,min:10;grpc:10,ratio:1;tokens:200,cost:5,refund:1,timeout-cost:10;tokens:500,cost:14,refund:1,timeout-cost:14,throttle-cost:5;earned:1000,cost:100,deposit:50;ratio:0.14,min:10'
FLEET='none;envoy:0.01,min:0;tower:1,ttl:10s,min:0;finagle:0.25,ttl:10s,min:0;grpc:4,ratio:1;tokens:8,cost:5,refund:1,timeout-cost:10;tokens:14,cost:14,refund:1,timeout-cost:14,throttle-cost:5;earned:150,cost:100,deposit:50;ratio:0.1,min:1'
TRIGGERS='none;outage@2s..4s;fail:0.05@2s..12s;fail:0.1@2s..12s;fail:0.25@2s..12s;spike:2@2s..3s;slow:3@2s..4s'
# ρ = 0.5 … 0.9: λ = ρ · 16 / E[S], E[S] = 20 ms · e^(0.3²/2) = 20.92 ms
RATES=382.4,458.9,535.4,611.8,688.3
RATES2=47.8,57.4,66.9,76.5,86.0
COMMON=(--duration 35s --patience 20s --seeds 16 --force -q)

"$H" sweep "$S" --budget "$CLIENT" --trigger "$TRIGGERS" --rate "$RATES" "${COMMON[@]}" \
  --out results/budgets-shootout-client.csv
"$H" sweep "$S" --sources 1000 --budget "$FLEET" --trigger "$TRIGGERS" --rate "$RATES" "${COMMON[@]}" \
  --out results/budgets-shootout-fleet.csv
# 3. Low concurrency: 2 workers at the same ρ, the client settings and Envoy's defaults.
"$H" sweep "$S" --workers 2 --budget "$CLIENT;envoy:0.2,min:3" \
  --trigger 'none;outage@2s..4s;fail:0.1@2s..12s;fail:0.25@2s..12s' --rate "$RATES2" "${COMMON[@]}" \
  --out results/budgets-shootout-w2.csv

# 4. Pictures.
"$H" plot results/budgets-shootout-client.csv --x rate_per_s --y stuck_mean --by budget \
  --where trigger=outage@2s..4s --out results/budgets-outage-stuck.svg --force
"$H" plot results/budgets-shootout-client.csv --x rate_per_s --y success_during_trigger_mean --by budget \
  --where trigger=fail:0.25@2s..12s --out results/budgets-partial25-client.svg --force
"$H" plot results/budgets-shootout-fleet.csv --x rate_per_s --y success_during_trigger_mean --by budget \
  --where trigger=fail:0.25@2s..12s --out results/budgets-partial25-fleet.svg --force

# 5. The tables.
python3 results/scripts/budgets_shootout.py > results/budgets-shootout.md
