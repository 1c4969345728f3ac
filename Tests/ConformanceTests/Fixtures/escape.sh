# Supports a few stimuli and answers each with ok, after starting two processes that leave its
# process group: `setsid sleep 1001`, whose parent (this adapter) stays, and `setsid sleep 1002`,
# started from a subshell that exits at once (an orphan re-parented away from the adapter).
# $1: a file to append their pids to.
. "$(dirname "$0")/adapter-lib.sh"
setsid sleep 1001 </dev/null >/dev/null 2>&1 &
echo "$!" >> "$1"
( setsid sleep 1002 </dev/null >/dev/null 2>&1 & echo "$!" >> "$1" )
hello '["connect","reset-identity","background-wake"]'
answer_every_stimulus_ok
