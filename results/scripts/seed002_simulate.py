#!/usr/bin/env python3
"""Seed 002's model run as its document writes it, to compare with its table.

A transcription of the seed's four strategies and its simulate(): float
milliseconds, Python's random module seeded once with 7, heap entries
(t, client, attempt, prev_delay), and the dispatch
`strategy(attempt) if strategy.__code__.co_argcount == 1 else strategy(prev)`,
under which every one of the four strategies, decorrelated_jitter included,
is called with the attempt number. `--intended` calls decorrelated_jitter with
the previous delay instead, as its docstring intends.

Prints one line per strategy: calls and the completion time simulate() returns
(the time the resource is next free after the last success, in seconds).

usage: seed002_simulate.py [--intended] [--seed N]
"""
import heapq
import random
import sys

BASE_MS, CAP_MS = 100, 20_000


def no_jitter(attempt):
    return min(CAP_MS, BASE_MS * 2 ** attempt)


def equal_jitter(attempt):
    ceiling = min(CAP_MS, BASE_MS * 2 ** attempt)
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def full_jitter(attempt):
    return random.uniform(0, min(CAP_MS, BASE_MS * 2 ** attempt))


def decorrelated_jitter(previous_ms):
    return min(CAP_MS, random.uniform(BASE_MS, previous_ms * 3))


def simulate(strategy, clients=1000, capacity_per_ms=1.0, seed=7, intended=False):
    random.seed(seed)
    queue = [(0.0, c, 0, 100.0) for c in range(clients)]
    heapq.heapify(queue)
    served_until, calls = 0.0, 0
    pass_prev = intended and strategy is decorrelated_jitter
    while queue:
        t, cid, attempt, prev = heapq.heappop(queue)
        calls += 1
        if t >= served_until:
            served_until = t + 1.0 / capacity_per_ms
            continue
        if pass_prev or strategy.__code__.co_argcount != 1:
            delay = strategy(prev)
        else:
            delay = strategy(attempt)
        heapq.heappush(queue, (t + delay, cid, attempt + 1, delay))
    return calls, served_until


def main():
    intended = "--intended" in sys.argv
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
    for name, s in [("none", no_jitter), ("equal", equal_jitter),
                    ("full", full_jitter), ("decorrelated", decorrelated_jitter)]:
        calls, t = simulate(s, seed=seed, intended=intended)
        print(f"{name:<14} calls={calls:>7}  completion={t / 1000:.1f}s")


if __name__ == "__main__":
    main()
