#!/usr/bin/env bash
# Wall time of the whole catalogue x both profiles against the reference client: in process
# (virtual time, no real waiting on the passing path) and as an adapter process with --jobs 2.
# Prints the median of several runs and the number of scenario runs. Not a test.
#
#   Benchmarks/suite-timing.sh [RUNS]      (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
swift build -c release --product harness >/dev/null
harness="$PWD/.build/release/harness"

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

measure() {
  local label="$1"; shift
  local times=() count=""
  for _ in $(seq "$runs"); do
    local json; json="$(mktemp)"
    local start end
    start=$(date +%s%N)
    "$harness" run "$@" --seed 1 --json "$json" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    times+=("$(( (end - start) / 1000000 ))")
    count=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; print(s.get("total", len(d["runs"])))' "$json")
    rm -f "$json"
  done
  printf '%-40s %s scenario runs, median %s ms over %s runs (all: %s)\n' "$label" "$count" \
    "$(printf '%s\n' "${times[@]}" | median)" "$runs" "${times[*]}"
}

measure "in-process reference client" --node reference
measure "in-process reference client, --jobs 4" --node reference --jobs 4
measure "process driver, --jobs 2" --node-command "$harness reference-node" --jobs 2
