#!/usr/bin/env bash
# Regenerates every committed result with the commands the book's Studies
# pages give (docs/src/studies/), from a release build; `git status results/`
# then shows what changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
herdsim() { ./target/release/herdsim "$@"; }

herdsim compare --policy none,equal,full,decorrelated,decorrelated-attempt \
    --markdown --csv results/four-strategies.csv --force --quiet > results/four-strategies.md
for p in none equal full decorrelated; do
  herdsim run --policy $p --seeds 100 -q; echo
done > results/default-workload.txt
herdsim sweep scenarios/clients-scaling.toml --out results/clients-scaling.csv --force --quiet
herdsim sweep scenarios/base-cap.toml --out results/base-cap.csv --force --quiet
herdsim sweep scenarios/metastable.toml --out results/metastable.csv --force --quiet
herdsim compare scenarios/outage-30s.toml --markdown --csv results/outage-30s.csv --force --quiet > results/outage-30s.md
herdsim compare scenarios/aws-occ.toml --markdown --csv results/aws-occ.csv --force --quiet > results/aws-occ.md
herdsim compare scenarios/backoff-simulator.toml --markdown --csv results/backoff-simulator.csv --force --quiet > results/backoff-simulator.md
herdsim compare --plot results/four-strategies-timeline.svg --force --quiet > /dev/null
herdsim policy none,equal,full,decorrelated --retries 10 --plot results/delays.svg --force > /dev/null
herdsim plot results/clients-scaling.csv --x clients --y calls_mean --by policy \
    --log-x --log-y --out results/clients-scaling.svg --force
herdsim plot results/clients-scaling.csv --x clients --y last_success_ms_mean --by policy \
    --log-x --log-y --out results/clients-scaling-time.svg --force
herdsim plot results/aws-occ.csv --x clients --y mean --by policy \
    --where metric=calls --out results/aws-occ-calls.svg --force
herdsim plot results/aws-occ.csv --x clients --y mean --by policy \
    --where metric=last_success_ms --log-y --out results/aws-occ-time.svg --force
herdsim plot results/metastable.csv --x trigger --y stuck_mean --by policy,max_attempts \
    --out results/metastable.svg --force
herdsim run --resource server --rate 500 --timeout 100ms --policy no-backoff --max-attempts 4 \
    --trigger outage@2s..2.5s -q --plot results/metastable-stuck.svg --force > /dev/null
herdsim run --resource server --rate 500 --timeout 100ms --policy full --base 1s --max-attempts 4 \
    --trigger outage@2s..2.5s -q --plot results/metastable-jitter.svg --force > /dev/null
herdsim map scenarios/metastable-map.toml --x trigger --y rate --force --quiet \
    --out results/map-immediate.csv --svg results/map-immediate.svg \
    --title "Immediate retries (4 attempts): storm probability by load and outage length" > results/map-immediate.txt
herdsim map scenarios/metastable-map.toml --x trigger --y rate --force --quiet --max-attempts 1 \
    --out results/map-no-retries.csv --svg results/map-no-retries.svg \
    --title "No retries: storm probability by load and outage length" > results/map-no-retries.txt
herdsim map scenarios/metastable-map.toml --x trigger --y rate --force --quiet --policy full \
    --out results/map-full-jitter.csv --svg results/map-full-jitter.svg \
    --title "Full jitter from 1 s (4 attempts): storm probability by load and outage length" > results/map-full-jitter.txt
herdsim map scenarios/metastable-map.toml --x trigger --y rate --force --quiet \
    --budget tokens:500,cost:5,refund:1,timeout-cost:10 \
    --out results/map-retry-quota.csv --svg results/map-retry-quota.svg \
    --title "Immediate retries under the AWS retry quota: storm probability by load and outage length" > results/map-retry-quota.txt
herdsim report scenarios/four-strategies.toml --policy none,equal,full,decorrelated,decorrelated-attempt \
    --out results/report-four-strategies.html --force --quiet
herdsim report scenarios/metastable.toml --trigger outage@2s..2.5s \
    --out results/report-metastable.html --force --quiet
herdsim report scenarios/yandex-2024/retry-cb-vs-budget.toml \
    --out results/report-yandex-2024-retry-cb-vs-budget.html --force --quiet
herdsim sweep scenarios/controls.toml --out results/controls.csv --force --quiet
herdsim plot results/controls.csv --x trigger --y stuck_mean \
    --by budget,breaker,throttle,queue_limit,discipline,shed_wait_ms,deadline_propagation \
    --out results/controls.svg --force
herdsim compare scenarios/controls.toml --trigger outage@2s..2.5s \
    --markdown --csv results/controls-outage.csv --force --quiet > results/controls-outage.md
herdsim compare scenarios/controls-partial.toml \
    --markdown --csv results/controls-partial.csv --force --quiet > results/controls-partial.md
herdsim compare scenarios/brooker-2022-retries.toml \
    --markdown --csv results/brooker-2022-retries.csv --force --quiet > results/brooker-2022-retries.md
herdsim compare scenarios/brooker-2022-client-count.toml \
    --markdown --csv results/brooker-2022-client-count.csv --force --quiet > results/brooker-2022-client-count.md
for metric in success load; do
  herdsim plot results/brooker-2022-retries.csv --x fail_rate --y herdsim_mean \
      --by max_attempts,budget,breaker --where metric=$metric --where sources=100 \
      --out results/brooker-2022-$metric.svg --force
done
python3 results/scripts/brooker_2022_exact.py > results/brooker-2022-exact-reference.csv
herdsim compare scenarios/brooker-2022-exact.toml --reference results/brooker-2022-exact-reference.csv \
    --markdown --force --quiet > results/brooker-2022-exact.md
# Yandex 2024: every scenario judged against the study's code, one Markdown
# report and one CSV for all of them.
first=1
for f in scenarios/yandex-2024/*.toml; do
  name=$(basename "$f" .toml)
  plot=()
  case $name in
    mfs|retry-cb-vs-budget|dp-vs-retry-budget|circuit-breaker-vs-retry-budget-cb10pct|retry-cb-or-budget-vs-exp-backoff)
      plot=(--plot "results/yandex-2024-$name.svg") ;;
  esac
  herdsim compare "$f" --markdown --csv results/yandex-2024.part.csv "${plot[@]}" --force --quiet
  echo
  if [ $first = 1 ]; then cp results/yandex-2024.part.csv results/yandex-2024.csv; first=0
  else tail -n +2 results/yandex-2024.part.csv >> results/yandex-2024.csv; fi
done > results/yandex-2024.md
rm results/yandex-2024.part.csv
# Yandex 2024 at 10,000 calls/s (the study's scaling: CPUs and static clients
# grow with the rate, the budget and the breaker's minimum calls do not),
# against 40 seeds of the study's code at that rate
# (results/yandex-2024-10000rps-reference.csv; docs/src/studies/yandex-2024.md says how).
first=1
for name in retry-cb-budget-global-vs-local circuit-breaker-vs-retry-budget-cb10pct \
    circuit-breaker-vs-retry-budget-cb50pct; do
  case $name in
    retry-cb-budget-global-vs-local) at=(--workers 412 --sources 50) ;;
    *) at=(--workers 206 --requests 15000) ;;
  esac
  herdsim compare "scenarios/yandex-2024/$name.toml" --rate 10000 "${at[@]}" --seeds 400 \
      --reference results/yandex-2024-10000rps-reference.csv \
      --markdown --csv results/yandex-2024-10000rps.part.csv --force --quiet
  echo
  if [ $first = 1 ]; then cp results/yandex-2024-10000rps.part.csv results/yandex-2024-10000rps.csv; first=0
  else tail -n +2 results/yandex-2024-10000rps.part.csv >> results/yandex-2024-10000rps.csv; fi
done > results/yandex-2024-10000rps.md
rm results/yandex-2024-10000rps.part.csv
herdsim compare scenarios/brooker-2023-omission.toml \
    --markdown --csv results/brooker-2023-omission.csv --force --quiet > results/brooker-2023-omission.md
herdsim compare scenarios/brooker-2023-omission-queue.toml \
    --markdown --csv results/brooker-2023-omission-queue.csv --force --quiet > results/brooker-2023-omission-queue.md
herdsim compare scenarios/brooker-2023-collapse.toml --plot results/brooker-2023-collapse.svg \
    --markdown --csv results/brooker-2023-collapse.csv --force --quiet > results/brooker-2023-collapse.md
# The held-out checks against reruns of the author's code (made by the
# scripts beside this one, from a checkout of mbrooker/simulator_example).
herdsim compare scenarios/brooker-2023-collapse.toml --reference results/brooker-2023-collapse-rerun.csv \
    --markdown --force --quiet > results/brooker-2023-collapse-rerun.md
herdsim compare scenarios/brooker-2023-omission-queue.toml \
    --reference results/brooker-2023-omission-queue-rerun.csv \
    --markdown --force --quiet > results/brooker-2023-omission-queue-rerun.md
# Layered services: amplification through a call chain
# (docs/src/studies/layers.md).
herdsim sweep scenarios/layers.toml --out results/layers.csv --force --quiet
herdsim plot results/layers.csv --x depth --y server_amplification_mean --by max_attempts,fail_rate \
    --log-y --out results/layers.svg --force
herdsim sweep scenarios/layers-controls.toml --out results/layers-controls.csv --force --quiet
herdsim plot results/layers-controls.csv --x depth --y server_amplification_mean \
    --by budget,retry_scope --where fail_rate=1 --log-y --out results/layers-controls.svg --force
herdsim sweep scenarios/layers-timeouts.toml --out results/layers-timeouts.csv --force --quiet
herdsim plot results/layers-timeouts.csv --x depth --y server_amplification_mean \
    --by layer_timeout_ratio --log-y --out results/layers-timeouts.svg --force
python3 results/scripts/layer_claims.py > results/layer-claims.md
# Envoy's retry budget with retries in backoff counted or not
# (envoyproxy/envoy#30205; docs/src/studies/controls.md).
herdsim compare scenarios/configs/envoy-budget-backoff.toml \
    --markdown --csv results/envoy-budget-backoff.csv --force --quiet > results/envoy-budget-backoff.md
# Issue 37's open questions: gRPC retryThrottling's settings for an
# amplification bound (grpc/grpc-go#7539) and Envoy's min_retry_concurrency
# against the service's concurrency (envoyproxy/envoy#25660;
# docs/src/studies/grpc-envoy-budgets.md).
results/scripts/grpc_envoy_budgets.sh target/release/herdsim
# Issue 37's retry-budget shoot-out (GEP-3388; docs/src/studies/budgets.md)
# and the AWS SDKs' 2026 retries against 2.0 (docs/src/studies/aws-2026.md).
results/scripts/budgets_shootout.sh target/release/herdsim
results/scripts/aws_2026.sh target/release/herdsim
# Issue 38: splitting against brute force and the exact chain, and metafor's
# chain against the mechanism (each writes its CSV and the tables of its page).
python3 results/scripts/splitting_agreement.py target/release/herdsim results
python3 results/scripts/metafor_mechanistic.py target/release/herdsim \
    ../shared/reference/metafor-ctmc.csv results
# Issue 60: am I affected by botocore 1.44? One AWS config under the 1.43
# line (the 2.0 quota) and the current release (2026), on a service near
# capacity (docs/src/guide/diff.md).
herdsim diff scenarios/configs/aws-config scenarios/configs/aws-config \
    --select-a sdk=botocore==1.43.67 --rate 900 --workers 1 --service exp:1ms \
    --timeout 20ms --seeds 16 -q > results/diff-aws-botocore-1.43-1.44.txt 2>&1
herdsim diff scenarios/configs/aws-config scenarios/configs/aws-config \
    --select-a sdk=botocore==1.43.67 --rate 900 --workers 1 --service exp:1ms \
    --timeout 20ms --seeds 16 -q --json > results/diff-aws-botocore-1.43-1.44.json
# Issue 58: herdsim against a real server (docs/src/studies/live.md): drill
# against serve beside run, five scenarios of scenarios/live/. Its live runs
# are real timers on a real machine, so no two regenerations give the same
# figures (and a busy machine gives worse ones): it runs only when asked,
# `results/scripts/regenerate.sh --live`, on a quiet machine (about 15
# minutes on 2 cores).
if [[ ${1:-} == --live ]]; then
  cargo build --release --quiet -p herdsim-live
  python3 results/scripts/live_study.py target/release results
  # Real retry libraries against `herdsim serve` (issue 59;
  # docs/src/studies/real-libraries.md): it installs grpcio, botocore,
  # grpc-js and tower in throwaway environments; about 25 minutes.
  results/scripts/real_libraries.sh target/release/herdsim
fi
