# Supports every documented stimulus and answers each with ok. Optional $1: a file to append
# "pgid statedir" to (for leak checks); optional $2: "grandchild" to leave a background
# process in the group.
. "$(dirname "$0")/adapter-lib.sh"
if [ -n "$1" ]; then
  echo "$$ $OPENCLAW_STATE_DIR" >> "$1"
fi
if [ "$2" = "grandchild" ]; then
  # Ignores SIGTERM, so only the harness's SIGKILL of the group ends it.
  ( trap '' TERM; while :; do sleep 1; done ) >/dev/null 2>&1 &
fi
echo "obedient adapter starting for $OPENCLAW_GATEWAY_URL" >&2
hello '["connect","disconnect","reset-identity","background-wake","enter-background","enter-foreground","request-scopes","push-register","switch-gateway","resolve-approval","answer-question","setup-code"]'
printf '{"type":"log","level":"info","message":"ready"}\n'
answer_every_stimulus_ok
