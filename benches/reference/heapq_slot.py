#!/usr/bin/env python3
"""A plain Python heapq loop of herdsim's slot model: the simple reference
implementation that `cargo bench` times beside the engine.

Same model as herdsim: integer microseconds, (time, seq) keys with first-in
first-out ties, capacity 1 request per ms, decorrelated jitter
d = min(cap, U[base, 3*prev]). Prints the calls of each run and the events
(calls) per second over all runs, as one line of JSON.

usage: heapq_slot.py [CLIENTS] [RUNS]
"""
import heapq
import json
import random
import sys
import time


def simulate(clients, rng, base=100_000, cap=20_000_000, service=1_000):
    queue = [(0, c, c) for c in range(clients)]  # (time, seq, client)
    heapq.heapify(queue)
    seq = clients
    prev = [base] * clients
    free_at = 0
    calls = 0
    while queue:
        t, _, c = heapq.heappop(queue)
        calls += 1
        if t >= free_at:
            free_at = t + service
            continue
        d = min(cap, rng.randint(base, 3 * prev[c]))
        prev[c] = d
        heapq.heappush(queue, (t + d, seq, c))
        seq += 1
    return calls


def main():
    clients = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rng = random.Random(42)
    start = time.perf_counter()
    calls = [simulate(clients, rng) for _ in range(runs)]
    elapsed = time.perf_counter() - start
    print(json.dumps({
        "implementation": "python heapq",
        "clients": clients,
        "runs": runs,
        "mean_calls": sum(calls) / runs,
        "events_per_second": sum(calls) / elapsed,
    }))


if __name__ == "__main__":
    main()
