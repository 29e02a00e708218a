#!/usr/bin/env python3
"""Reruns Brooker 2023's omission model with the author's own code and writes
the queue at each second in the shape of
reference/brooker-2023-omission-queue.csv, for `herdsim compare
scenarios/brooker-2023-omission-queue.toml --reference FILE` (the held-out
check).

The author's code is read from a checkout of mbrooker/simulator_example
(omission/omission.py; it is not vendored here): its job types, server and
clients run as they are. The loop is the code's with heapq.heappush in place
of extending the list and heapifying it (the same pop order), and it notes
the state in force at each checkpoint (1000, 2000, ... ms): the jobs waiting
and those in the system. Each configuration's run starts with
`random.seed(s)`, as the reference's do.

usage: brooker_2023_omission_queue_rerun.py OMISSION_PY FIRST_SEED SEEDS [GROUP ...] > out.csv
GROUP: bimod_timeout, exp, bimod, weibull (default: all four)
"""
import heapq
import math
import random
import sys

MAKERS = {
    "bimod_timeout": "make_sim_bimod_timeout",
    "exp": "make_sim_exp",
    "bimod": "make_sim_bimod",
    "weibull": "make_sim_weibull",
}
CONFIGS = {
    "bimod_timeout": ["open", "open_timeout_15"],
    "exp": ["exp_open", "exp_closed_1", "exp_closed_10"],
    "bimod": ["bimod_open", "bimod_closed_1", "bimod_closed_10"],
    "weibull": ["weibull_open", "weibull_closed_1", "weibull_closed_10"],
}
MAX_T = 5000.0


class Discard:
    """The server's per-completion log, not needed here."""

    def write(self, _text):
        pass


def checkpoints(client, max_t):
    """(waiting, in system) at each whole second up to max_t."""
    client.server.file = Discard()
    due = [1000.0 * k for k in range(1, int(max_t // 1000) + 1)]
    seen = []
    t = 0.0
    q = [(t, client.generate, None)]
    while q and t < max_t:
        (t, call, payload) = heapq.heappop(q)
        while due and t >= due[0]:
            seen.append((client.server.queue.len(), client.server.queue.len() + client.server.busy))
            due.pop(0)
        for event in call(t, payload) or ():
            heapq.heappush(q, event)
    while due:
        seen.append((client.server.queue.len(), client.server.queue.len() + client.server.busy))
        due.pop(0)
    return seen


def sd(xs):
    mean = sum(xs) / len(xs)
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0


def main():
    path, first, seeds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    groups = sys.argv[4:] or list(MAKERS)
    model = {}
    source = open(path).read().split("run_t = 5000.0")[0]
    exec(compile(source, path, "exec"), model)
    print("group,config,t_ms,seeds,qwait_mean,qwait_sd,qwait_min,qwait_max,nsys_mean,nsys_sd")
    for group in groups:
        for i, config in enumerate(CONFIGS[group]):
            runs = []
            for seed in range(first, first + seeds):
                random.seed(seed)
                client = model[MAKERS[group]]()[i]
                runs.append(checkpoints(client, MAX_T))
            for k in range(len(runs[0])):
                waiting = [r[k][0] for r in runs]
                system = [r[k][1] for r in runs]
                print(f"{group},{config},{1000 * (k + 1)},{seeds},"
                      f"{sum(waiting) / seeds:.2f},{sd(waiting):.2f},{min(waiting)},{max(waiting)},"
                      f"{sum(system) / seeds:.2f},{sd(system):.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
