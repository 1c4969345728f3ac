#!/usr/bin/env bash
# The run-model targets of the project (Benchmarks/README.md, "Catalogue wall time"), measured
# side by side in one invocation with the release build: the median of RUNS runs of each, with
# the CPU time, the idle share (wall / CPU) of in-process runs, and, for process runs, the wall
# time against the floor the rules impose (the longest single run: its real-time windows cannot
# be shortened, whatever --jobs is). Not a test: nothing here asserts.
#
#   Benchmarks/suite-timing.sh [RUNS]      (default 3)
#
# HARNESS=PATH measures that binary instead of building one (to compare two builds, such as the
# commit before a change and after it, on the same machine in one session).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
if [ -n "${HARNESS:-}" ]; then
  harness="$(realpath "$HARNESS")"
else
  swift build -c release --product harness >/dev/null
  harness="$PWD/.build/release/harness"
fi
export harness

# One measurement: LABEL then the harness arguments. Prints median wall, median CPU (user+sys of
# the harness and its children), and for JSON reports the sum and maximum of the runs' own
# durations.
measure() {
  local label="$1"; shift
  python3 - "$label" "$runs" "$@" <<'PY'
import json, os, resource, statistics, subprocess, sys, tempfile, time
label, runs, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
walls, cpus, sums, longest, total = [], [], [], [], None
for _ in range(runs):
    report = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    json_args = [] if args[0] == "selftest" else ["--json", report]
    subprocess.run([os.environ["harness"], *args, *json_args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls.append(time.monotonic() - start)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    if json_args and os.path.getsize(report) > 0:
        data = json.load(open(report))
        durations = [r["durationMs"] / 1000 for r in data["runs"]]
        total = data["summary"]["total"]
        sums.append(sum(durations)); longest.append(max(durations, default=0))
    os.unlink(report)
wall, cpu = statistics.median(walls), statistics.median(cpus)
line = f"{label:<58} wall {wall:7.2f} s  cpu {cpu:7.2f} s  wall/cpu {wall / cpu if cpu else 0:5.2f}"
if total is not None:
    line += f"  runs {total}  run time summed {statistics.median(sums):7.1f} s  floor (longest run) {statistics.median(longest):5.1f} s"
print(line + f"   (walls: {', '.join(f'{w:.2f}' for w in walls)})", flush=True)
PY
}

echo "median of $runs runs each; $(nproc) cores"
measure "in process, reference client, --jobs 1 (target < 1 s)" run --node reference --jobs 1 --seed 1
measure "in process, --mutant wrong-device-id, --jobs 1 (target < 2 s)" run --node reference --mutant wrong-device-id --jobs 1 --seed 1
measure "full harness selftest, default --jobs (target < 60 s)" selftest --seed 1
measure "process driver, harness reference-node, default --jobs (target < 60 s)" \
  run --node-command "$harness reference-node" --seed 1
measure "process driver, every connect refused, default --jobs (target < 30 s)" \
  run --node-command "$harness reference-node --mutant wrong-device-id" --seed 1
