# Supports a few stimuli and answers each with ok, but ignores SIGTERM: when its stdin closes it
# goes on as `sleep 1003` (which inherits the ignored SIGTERM) until the harness's SIGKILL.
# $1: a file to append its pid to.
. "$(dirname "$0")/adapter-lib.sh"
trap '' TERM
echo "$$" >> "$1"
hello '["connect","reset-identity","background-wake"]'
answer_every_stimulus_ok
exec sleep 1003
