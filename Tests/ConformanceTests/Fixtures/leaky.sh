# Logs secrets in three shapes (a token=… pair and a Bearer header on stderr, a JSON password in
# an adapter log line), then supports a few stimuli and answers each with ok.
# $1: a tag every planted secret contains.
. "$(dirname "$0")/adapter-lib.sh"
echo "connecting with token=LEAKTOKEN-$1" >&2
echo "Authorization: Bearer LEAKBEARER-$1" >&2
printf '{"type":"log","level":"info","message":"config {\\"password\\":\\"LEAKPASSWORD-%s\\"}"}\n' "$1"
hello '["connect","reset-identity","background-wake"]'
answer_every_stimulus_ok
