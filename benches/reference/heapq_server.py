#!/usr/bin/env python3
"""A plain Python heapq loop of herdsim's server model on its M/M/c check:
the simple reference implementation that `herdsim bench` and `cargo bench`
time beside the engine.

The same events as herdsim's loop, keyed (time, seq) with first-in first-out
ties in integer ns: an open-loop Poisson arrival schedules the next arrival
and sends its request's attempt, which reaches the server (no network delay,
still an event), is served by one of c workers or waits in a FIFO queue,
completes after an exponential service time and sends its reply (an event).
Four events per request; no timeouts or retries. Prints the requests, the
events, the mean sojourn W (to check it is the M/M/c queue: Erlang C), the
events per second over all runs and in the fastest run, as one line of JSON.

usage: heapq_server.py [REQUESTS] [RUNS] [WORKERS] [RATE_PER_MS]
"""
import collections
import heapq
import json
import math
import random
import sys
import time

ARRIVAL, AT_SERVER, SERVICE_DONE, REPLY = range(4)
NS_PER_MS = 1_000_000


def simulate(requests, rng, workers, rate_per_ms, service_mean_ns=NS_PER_MS):
    duration = requests / rate_per_ms * NS_PER_MS
    mean_gap = NS_PER_MS / rate_per_ms
    events = []
    seq = 0

    def schedule(t, kind, req):
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, req))

    def exp(mean):
        return round(-mean * math.log(1.0 - rng.random()))

    queue = collections.deque()
    busy = 0
    made = 0
    handled = 0
    sojourn_total = 0
    arrived_at = {}
    schedule(exp(mean_gap), ARRIVAL, 0)
    while events:
        t, _, kind, req = heapq.heappop(events)
        handled += 1
        if kind == ARRIVAL:
            made += 1
            schedule(t, AT_SERVER, made)
            nxt = t + exp(mean_gap)
            if nxt < duration:
                schedule(nxt, ARRIVAL, 0)
        elif kind == AT_SERVER:
            arrived_at[req] = t
            if busy < workers:
                busy += 1
                schedule(t + exp(service_mean_ns), SERVICE_DONE, req)
            else:
                queue.append(req)
        elif kind == SERVICE_DONE:
            busy -= 1
            sojourn_total += t - arrived_at.pop(req)
            schedule(t, REPLY, req)
            if queue:
                busy += 1
                schedule(t + exp(service_mean_ns), SERVICE_DONE, queue.popleft())
        # REPLY: the client has its answer; nothing more to do.
    return made, handled, sojourn_total / made / NS_PER_MS


def main():
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    rate_per_ms = float(sys.argv[4]) if len(sys.argv) > 4 else 3.5
    rng = random.Random(42)
    results, seconds = [], []
    for _ in range(runs):
        start = time.perf_counter()
        results.append(simulate(requests, rng, workers, rate_per_ms))
        seconds.append(time.perf_counter() - start)
    elapsed = sum(seconds)
    events = sum(r[1] for r in results)
    print(json.dumps({
        "implementation": "python heapq",
        "requests_per_run": sum(r[0] for r in results) / runs,
        "runs": runs,
        "events": events,
        "mean_sojourn_ms": sum(r[2] for r in results) / runs,
        "seconds": elapsed,
        "events_per_second": events / elapsed,
        # The fastest run's rate: on a shared machine, interference only
        # ever slows a run down.
        "fastest_run_events_per_second": max(r[1] / t for r, t in zip(results, seconds)),
    }))


if __name__ == "__main__":
    main()
