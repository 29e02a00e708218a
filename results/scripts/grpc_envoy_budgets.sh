#!/usr/bin/env bash
# Issue 37's open questions about two budgets' settings, answered with runs
# (docs/src/studies/grpc-envoy-budgets.md):
#
# - grpc/grpc-go#7539: which retryThrottling (maxTokens, tokenRatio) bounds
#   the amplification to 1.1× and 1.5×? `herdsim tune --control grpc` on the
#   checkout service of scenarios/configs/grpc-assess.toml with its 550
#   requests/s spread over 10, 50 and 250 channels (each channel its own
#   tokens, as gRPC keeps them), and a sweep of the partial failure's share
#   against tokenRatio over a minute of failure;
# - envoyproxy/envoy#25660: how should min_retry_concurrency follow a
#   service's concurrency? `herdsim tune --control envoy` on the checkout
#   service behind Envoy (scenarios/configs/envoy-concurrency.toml) at 2 to
#   64 workers, the rate scaled with them so that ρ stays 0.69, beside each
#   service's requests in flight without a failure.
#
# Called by regenerate.sh; by hand: results/scripts/grpc_envoy_budgets.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-target/release/herdsim}
herdsim() { "$bin" "$@"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# gRPC: the largest maxTokens within each bound, per channel count. tokenRatio
# is fixed: a full outage has no success to add it (the sweep below is where
# it acts).
for channels in 10 50 250; do
  for bound in 1.1 1.5; do
    herdsim tune scenarios/configs/grpc-assess.toml --control grpc --sources "$channels" \
        --param grpc=2,4,8,16,32,64,128,256,1000 --param ratio=0.1 --bound "$bound" \
        --refine 4 --force --quiet -o "results/grpc-throttling-${channels}ch-${bound}.csv" > /dev/null
  done
done
# gRPC: a minute of a partial failure of each share against tokenRatio, 50
# channels of maxTokens 100: attempts per request and success while it lasts.
herdsim sweep scenarios/configs/grpc-assess.toml --duration 60s --seeds 8 \
    --budget 'grpc:100,ratio:0.01;grpc:100,ratio:0.05;grpc:100,ratio:0.1;grpc:100,ratio:0.25;grpc:100,ratio:0.5;grpc:100,ratio:1' \
    --fail-rate 0.01,0.02,0.05,0.08,0.1,0.15,0.2,0.3,0.5 \
    --out results/grpc-throttling-ratio.csv --force --quiet
python3 results/scripts/grpc_throttling.py results > results/grpc-throttling.md

# Envoy: the largest min_retry_concurrency within 1.2× and 1.5× at each
# service concurrency (budget_percent at Envoy's default 20%), and the
# requests in flight (λ × mean latency, Little's law) without a failure.
for workers in 2 4 8 16 32 64; do
  rate=$(python3 -c "print(550 * $workers / 16)")
  for bound in 1.2 1.5; do
    herdsim tune scenarios/configs/envoy-concurrency.toml --control envoy --workers "$workers" --rate "$rate" \
        --param min=0,1,2,3,4,8,16,32,64,128,256,512,1024 --param envoy=0.2 --bound "$bound" \
        --refine 4 --force --quiet -o "results/envoy-concurrency-${workers}w-${bound}.csv" > /dev/null
  done
  herdsim sweep scenarios/configs/envoy-concurrency.toml --workers "$workers" --rate "$rate" \
      --duration 10s --seeds 16 --out "$scratch/baseline-${workers}.csv" --force --quiet
done
python3 results/scripts/envoy_concurrency.py results "$scratch" > results/envoy-concurrency.md
