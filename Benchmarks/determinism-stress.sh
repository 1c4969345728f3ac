#!/usr/bin/env bash
# Same client, same seed, same verdict on a loaded machine: runs the whole catalogue 20 times
# against the in-process reference client with one seed while `stress-ng --cpu 2` loads both
# cores, and requires byte-identical reports (without durationMs) and transcripts (without the
# field t, and with the transcript directory's path replaced). Then runs it 5 times through
# the process driver (`harness reference-node`, real time) under the same load and requires the
# same verdict for every run. Exits 1 on any difference. Not part of `swift test` (it takes
# minutes); DeterminismTests checks two in-process runs there.
#
#   Benchmarks/determinism-stress.sh [SEED] [IN_PROCESS_RUNS] [PROCESS_RUNS]   (default 5 20 5)
set -euo pipefail
cd "$(dirname "$0")/.."
seed="${1:-5}"
inprocess="${2:-20}"
processes="${3:-5}"
if ! command -v stress-ng >/dev/null 2>&1; then
  echo "stress-ng is missing: apt-get install stress-ng" >&2
  exit 2
fi
swift build -c release --product harness >/dev/null
harness="$PWD/.build/release/harness"
work="$(mktemp -d)"
trap 'kill "$stress" 2>/dev/null || true; rm -rf "$work"' EXIT
stress-ng --cpu 2 --quiet &
stress=$!

normalize() {  # REPORT.json TRANSCRIPT_DIR -> one normalized text on stdout
  python3 - "$1" "$2" <<'PY'
import json, os, sys
report, directory = sys.argv[1], sys.argv[2]
def strip(value, key):
    if isinstance(value, dict): return {k: strip(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list): return [strip(v, key) for v in value]
    return value
text = open(report).read().replace(directory, "<transcripts>")
print(json.dumps(strip(json.loads(text), "durationMs"), sort_keys=True))
for name in sorted(os.listdir(directory)):
    body = open(os.path.join(directory, name)).read()
    if name.endswith(".jsonl"):
        body = "\n".join(json.dumps(strip(json.loads(line), "t"), sort_keys=True) for line in body.splitlines())
    print(name); print(body)
PY
}

status=0
for run in $(seq "$inprocess"); do
  "$harness" run --node reference --seed "$seed" --json "$work/r$run.json" --transcripts "$work/t$run" --quiet >/dev/null || true
  normalize "$work/r$run.json" "$work/t$run" > "$work/n$run.txt"
  if [ "$run" -gt 1 ] && ! cmp -s "$work/n1.txt" "$work/n$run.txt"; then
    echo "in-process run $run differs from run 1:"; diff "$work/n1.txt" "$work/n$run.txt" | head -20; status=1
  fi
done
echo "in process: $inprocess runs with seed $seed under stress-ng --cpu 2: $([ $status -eq 0 ] && echo identical || echo DIFFERENT)"

verdicts() {  # REPORT.json -> one "ID@profile verdict" line per run
  python3 - "$1" <<'PY'
import json, sys
for run in json.load(open(sys.argv[1]))["runs"]:
    print(f"{run['id']}@{run['profile']} {run['verdict']}")
PY
}
for run in $(seq "$processes"); do
  "$harness" run --node-command "$harness reference-node" --seed "$seed" --json "$work/p$run.json" --quiet >/dev/null || true
  verdicts "$work/p$run.json" > "$work/v$run.txt"
  if [ "$run" -gt 1 ] && ! cmp -s "$work/v1.txt" "$work/v$run.txt"; then
    echo "process run $run has other verdicts than run 1:"; diff "$work/v1.txt" "$work/v$run.txt"; status=1
  fi
done
echo "process driver: $processes runs under stress-ng --cpu 2: $(grep -c ' pass$' "$work/v1.txt") of $(wc -l < "$work/v1.txt") pass; verdicts $([ $status -eq 0 ] && echo identical || echo DIFFERENT)"
exit $status
