#!/usr/bin/env bash
# Whether the hand-written Codable bridges of JSONValue (JSONValueEncoder, JSONValueDecoder) pay
# for themselves on a whole run: builds the release `harness` of the commit "Benchmark: a
# run-time switch between the JSON coders and Foundation's" (found by its subject, or REV), in
# which OPENCLAW_JSON_CODABLE=text routes `JSONValue(encoding:)` through JSONEncoder and
# `JSONValue.parse`, and `decode(as:)` through `encoded()` and JSONDecoder. Then runs the whole
# catalogue against the in-process reference client (`harness run --node reference --jobs 1
# --seed 1`) RUNS times each way with the same binary, alternating which goes first, and prints
# the median wall and CPU time (user + system) of each and the ratio Foundation / hand-written.
# Not a test: nothing here asserts.
#
#   Benchmarks/json-coders.sh [RUNS] [REV]      (default 21, the commit above)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-21}"
rev="${2:-$(git log --format=%h -1 --grep="^Benchmark: a run-time switch between the JSON coders")}"
if [ -z "$rev" ]; then
  echo "the benchmark commit is not in this history; pass REV" >&2
  exit 2
fi
scratch="${TMPDIR:-/tmp}/openclaw-json-coders-$rev"
if [ ! -d "$scratch/src" ]; then
  mkdir -p "$scratch/src"
  git archive "$rev" | tar -x -C "$scratch/src"
fi
(cd "$scratch/src" && swift build -c release --product harness --scratch-path "$scratch/build" >/dev/null)
harness="$scratch/build/release/harness"
python3 - "$runs" "$harness" "$rev" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, harness, rev = int(sys.argv[1]), sys.argv[2], sys.argv[3]
walls = {"hand-written": [], "Foundation": []}
cpus = {"hand-written": [], "Foundation": []}
for index in range(runs):
    order = list(walls) if index % 2 == 0 else list(reversed(list(walls)))
    for name in order:
        environment = dict(os.environ)
        environment.pop("OPENCLAW_JSON_CODABLE", None)
        if name == "Foundation":
            environment["OPENCLAW_JSON_CODABLE"] = "text"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        subprocess.run([harness, "run", "--node", "reference", "--jobs", "1", "--seed", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, check=True)
        walls[name].append(time.monotonic() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus[name].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
print(f"commit {rev}: whole catalogue in process, reference client, --jobs 1; median of {runs} runs each; {os.cpu_count()} cores")
for name in walls:
    print(f"{name:<13} wall {statistics.median(walls[name]):6.3f} s  cpu {statistics.median(cpus[name]):6.3f} s")
print(f"ratio Foundation / hand-written: cpu {statistics.median(cpus['Foundation']) / statistics.median(cpus['hand-written']):.3f}"
      f"  wall {statistics.median(walls['Foundation']) / statistics.median(walls['hand-written']):.3f}")
PY
