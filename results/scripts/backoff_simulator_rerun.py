#!/usr/bin/env python3
"""Runs backoff-simulator (PyPI, 0.1.1) at its own defaults with fixed seeds
and writes each point's write requests and duration, mean and sd over the
runs, for reference/backoff-simulator.csv: what `herdsim compare
scenarios/backoff-simulator.toml` judges herdsim's occ model against.

The package is not vendored: give the directory that holds its
`backoff_simulator` package (an unpacked wheel: `pip download
backoff-simulator==0.1.1 --no-deps`, then unzip), and a Python of 3.12 or
later (its code uses the `type` statement). Its plotting imports are stubbed
(matplotlib and tabulate are not needed to simulate). Its defaults (cli.py):
clients 1..50 in 20 steps, network max(0, N(10 ms, 2 ms)) per hop, writes
|N(2 ms, 1 ms)|, backoff Constant(0.5 ms), Expo, FullJitteredExpo and
EqualJitteredExpo (base 2 ms, cap 1 s), the locking, write-only OCC and
read-write OCC servers. Run k of every point is `random.seed(k)` and the
package's own Simulation.run().

usage: backoff_simulator_rerun.py PACKAGE_DIR FIRST_SEED RUNS > out.csv
"""
import math
import random
import sys
import types

for name in ["matplotlib", "matplotlib.pyplot", "matplotlib.ticker", "tabulate"]:
    stub = types.ModuleType(name)
    stub.MaxNLocator = stub.tabulate = object
    sys.modules[name] = stub
sys.path.insert(0, sys.argv[1])
import backoff_simulator.simulation as bs  # noqa: E402

CONTROLS = [
    ("locking", bs.LockingServer, bs.WriteOnlyClient),
    ("write-only", bs.WriteOnlyOCCServer, bs.WriteOnlyClient),
    ("read-write", bs.ReadWriteOCCServer, bs.ReadWriteClient),
]
STRATEGIES = [
    ("Constant", lambda: bs.Constant(0.5)),
    ("Expo", lambda: bs.Expo(2.0, 1000.0)),
    ("FullJitteredExpo", lambda: bs.FullJitteredExpo(2.0, 1000.0)),
    ("EqualJitteredExpo", lambda: bs.EqualJitteredExpo(2.0, 1000.0)),
]


def sd(xs):
    mean = sum(xs) / len(xs)
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


def main():
    first, runs = int(sys.argv[2]), int(sys.argv[3])
    network = bs.Network(10.0, 2.0)
    print("control,strategy,clients,runs,requests_mean,requests_sd,duration_ms_mean,duration_ms_sd")
    for control, server_cls, client_cls in CONTROLS:
        for strategy, make in STRATEGIES:
            for clients in bs.get_client_nums(50):
                work, duration = [], []
                for k in range(first, first + runs):
                    random.seed(k)
                    server = server_cls(network, 2.0, 1.0)
                    backoff = make()
                    sim = bs.Simulation(
                        server,
                        [client_cls(j, network, server, backoff.get_backoffs()) for j in range(clients)],
                        backoff,
                    )
                    sim.run()
                    work.append(sim.work())
                    duration.append(sim.duration())
                print(f"{control},{strategy},{clients},{runs},{sum(work) / runs:.4f},{sd(work):.4f},"
                      f"{sum(duration) / runs:.4f},{sd(duration):.4f}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
