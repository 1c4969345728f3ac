# Appends one line to $1 per start (to count restarts), then behaves.
. "$(dirname "$0")/adapter-lib.sh"
echo "start $OPENCLAW_STATE_DIR" >> "$1"
hello '["connect","reset-identity","background-wake"]'
answer_every_stimulus_ok
