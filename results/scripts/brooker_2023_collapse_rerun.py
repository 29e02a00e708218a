#!/usr/bin/env python3
"""Reruns Brooker 2023's simple collapse model with the author's own code and
writes the figures in the shape of reference/brooker-2023-collapse.csv, for
`herdsim compare scenarios/brooker-2023-collapse.toml --reference FILE` (the
held-out check).

The author's code is read from a checkout of mbrooker/simulator_example (it is
not vendored here): its classes and run functions are executed as they are,
with two changes outside the model. The loop pushes each new event with
heapq.heappush instead of extending the list and heapifying it again (the
same pop order, as the reference's authors verified, and hours faster), and
each second's statistics record the server's concurrency at the bin's end
(the code prints run 0's final concurrency for every row, a bug). Seed s runs
`random.seed(s)` before each scenario's run, so the scenarios share random
numbers, as the reference's do.

usage: brooker_2023_collapse_rerun.py SIM_PY FIRST_SEED SEEDS [SCENARIO ...] > out.csv
"""
import heapq
import math
import random
import sys

SCENARIOS = {
    "ramp_no_backoff": ("run_sim_ramp", "Client"),
    "ramp_backoff_and_jitter": ("run_sim_ramp", "ClientWithBackoffAndJitter"),
    "spike_no_backoff": ("run_sim_spike", "Client"),
    "spike_backoff_and_jitter": ("run_sim_spike", "ClientWithBackoffAndJitter"),
}
COLUMNS = ["starts", "successes", "retries", "timeouts", "giveups", "concurrency_at_bin_end"]


def load_model(path):
    """The author's module, without its bottom-of-file runs."""
    source = open(path).read().split("run_multiple_n = 10")[0]
    source = source.replace("StatData.header()", "")
    model = {}
    exec(compile(source, path, "exec"), model)

    def sim_loop(max_t, q):
        t = 0.0
        heapq.heapify(q)
        while len(q) > 0 and t < max_t:
            (t, call, payload) = heapq.heappop(q)
            for event in call(t, payload) or ():
                heapq.heappush(q, event)

    model["sim_loop"] = sim_loop
    print_stats = model["Stats"].print_stats

    def print_stats_with_concurrency(self, t, data):
        self.data.concurrency_at_end = self.data.server.concurrency
        return print_stats(self, t, data)

    model["Stats"].print_stats = print_stats_with_concurrency
    return model


def nominal_rate(scenario, t_mid):
    if scenario.startswith("ramp"):
        return max(0.0, 80 - 1.6 * abs(t_mid - 25))
    return 80.0 if 20 <= t_mid <= 25 else 40.0


def main():
    path, first, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    names = sys.argv[4:] or list(SCENARIOS)
    model = load_model(path)
    print("scenario,t_bin_start_s,seeds,nominal_rate_mid," + ",".join(
        f"{c}_mean,{c}_sd" for c in COLUMNS))
    for name in names:
        run, client = SCENARIOS[name]
        bins = []
        for seed in range(first, first + seeds):
            random.seed(seed)
            for k, d in enumerate(model[run](name, model[client])):
                if k >= len(bins):
                    bins.append([])
                bins[k].append([d.starts, d.successes, d.retries, d.timeouts,
                                d.timeouts - d.retries, d.concurrency_at_end])
        for k, values in enumerate(bins):
            fields = [name, str(k), str(len(values)), f"{nominal_rate(name, k + 0.5):g}"]
            for i in range(len(COLUMNS)):
                xs = [v[i] for v in values]
                mean = sum(xs) / len(xs)
                sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
                fields += [f"{mean:.2f}", f"{sd:.2f}"]
            print(",".join(fields))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
