#!/usr/bin/env python3
"""Compares two `harness` binaries on the in-process catalogue, on the same machine in one go.

    Benchmarks/compare-builds.py BEFORE AFTER [RUNS] [FILTER]      (RUNS default 7)

FILTER (a comma-separated list of scenario IDs or globs, as `harness run --filter` takes it)
restricts both binaries to the same scenarios, so that two builds whose catalogues differ are
measured on the same work; without it each runs its whole catalogue.

Each measurement alternates between the two binaries (BEFORE, AFTER, BEFORE, ...) so that load
from the rest of the machine falls on both alike, and reports the median wall and CPU time
(user + system of the harness process) of each and the ratio AFTER / BEFORE. Measured:
the whole catalogue with the reference client in process (`run --node reference --jobs 1
--seed 1`) and the same with a client that cannot connect (`--mutant wrong-device-id`). Not a
test: nothing asserts.
The CPU ratio is the one to read on a busy machine; wall time includes waiting for the CPU.
"""
import os, resource, statistics, subprocess, sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
before, after = (os.path.realpath(p) for p in sys.argv[1:3])
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
scope = ["--filter", sys.argv[4]] if len(sys.argv) > 4 else []

def once(binary, args):
    start = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = os.times().elapsed
    subprocess.run([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = os.times().elapsed - t0
    end = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)

def measure(label, args, n):
    samples = {before: [], after: []}
    for _ in range(n):
        for binary in (before, after):
            samples[binary].append(once(binary, args))
    med = {b: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s)) for b, s in samples.items()}
    (wb, cb), (wa, ca) = med[before], med[after]
    print(f"{label:<46} before wall {wb:6.2f} s cpu {cb:6.2f} s | after wall {wa:6.2f} s cpu {ca:6.2f} s"
          f" | ratio after/before: wall {wa / wb:4.2f} cpu {ca / cb:4.2f}   ({n} runs each)", flush=True)

print(f"before: {before}\nafter:  {after}\n{os.cpu_count()} cores, medians, alternating runs")
measure("catalogue, reference client, --jobs 1", ["run", "--node", "reference", "--jobs", "1", "--seed", "1", *scope], runs)
measure("catalogue, --mutant wrong-device-id, --jobs 1",
        ["run", "--node", "reference", "--mutant", "wrong-device-id", "--jobs", "1", "--seed", "1", *scope], runs)
