#!/bin/sh
# Splitting's speed at a chance of about 1e-6 (issue 38, item 5), beside a
# reference on the same machine in the same run: plain runs of the same
# service, whose time per run says what brute force would take for the
# same interval. Usage: splitting_speed.sh HERDSIM (a release build).
set -eu
herdsim=$1
service="--resource server --rate 400 --workers 1 --queue-limit 10 --service exp:1ms
  --discipline random --timeout 10ms --timeout-law exponential --policy memoryless
  --base 20ms --cap 10s --budget persistence:0.75 --trigger outage@500ms..520ms
  --duration 1s --low 1"
now() { date +%s.%N; }
echo "threads: ${RAYON_NUM_THREADS:-all} of $(nproc) cores"
# shellcheck disable=SC2086
"$herdsim" exact $(echo "$service" | sed 's/--resource server//; s/--duration 1s//') \
  --high 43 --orbit-cap 120 | grep "storm probability"
start=$(now)
# shellcheck disable=SC2086
"$herdsim" run $service --high 43 --seeds 2 --splitting 1000 --batches 40 -q | tail -4
end=$(now)
echo "splitting, 1,000 paths x 40 batches: $(echo "$end - $start" | bc) s"
start=$(now)
# shellcheck disable=SC2086
"$herdsim" run $service --high 43 --seeds 100000 -q | grep "storm before"
end=$(now)
echo "reference, 100,000 plain runs: $(echo "$end - $start" | bc) s"
