# Announces itself and exits with status 3 right away, while the scenario is running.
. "$(dirname "$0")/adapter-lib.sh"
hello '["connect","reset-identity","background-wake"]'
echo "giving up" >&2
exit 3
