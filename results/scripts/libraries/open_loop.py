"""What every Python driver shares: Poisson arrivals at a fixed rate for a
fixed time (open loop: a call is sent at its time whatever the earlier ones
are doing), one call id per call, and the client's record of each call."""

import argparse
import csv
import random
import time


def arguments(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True, help="calls per second")
    parser.add_argument("--duration", type=float, required=True, help="seconds of load")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, help="client record, CSV")
    parser.add_argument("--config", required=True, help="the library's configuration file")
    parser.add_argument("--profile", default="default")
    return parser


def schedule(rate, duration, seed):
    """Send times (s after the start) of a Poisson process, at most 100,000."""
    rng = random.Random(seed)
    times, t = [], 0.0
    while len(times) < 100_000:
        t += rng.expovariate(rate)
        if t >= duration:
            break
        times.append(t)
    return times


def pace(start, at):
    """Sleeps until `at` seconds after `start` (perf_counter)."""
    delay = start + at - time.perf_counter()
    if delay > 0:
        time.sleep(delay)


def write_record(path, rows):
    """rows: (call, start_s, end_s, outcome) with times from the load's start."""
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["call", "start_ms", "end_ms", "outcome"])
        for call, start, end, outcome in sorted(rows, key=lambda r: r[1]):
            out.writerow([call, f"{start * 1e3:.3f}", f"{end * 1e3:.3f}", outcome])
