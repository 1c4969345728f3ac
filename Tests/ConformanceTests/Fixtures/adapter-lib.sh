# Shared helpers for the fixture adapters: line-delimited JSON over stdin/stdout.
# Stimuli arrive with sorted keys, so "id" is always the first key of the line.

hello() {
  # $1: JSON array of stimulus names
  printf '{"type":"hello","adapterProtocol":1,"client":{"name":"fixture","version":"1"},"stimuli":%s}\n' "$1"
}

stimulus_id() {
  printf '%s' "$1" | sed -n 's/^{"id":"\([^"]*\)".*/\1/p'
}

stimulus_name() {
  printf '%s' "$1" | sed -n 's/.*"stimulus":"\([^"]*\)".*/\1/p'
}

reply() {
  # $1: id, $2: status, $3: optional message
  if [ -n "$3" ]; then
    printf '{"type":"reply","id":"%s","status":"%s","message":"%s"}\n' "$1" "$2" "$3"
  else
    printf '{"type":"reply","id":"%s","status":"%s"}\n' "$1" "$2"
  fi
}

answer_every_stimulus_ok() {
  # Replies `ok` to every stimulus until stdin closes.
  while IFS= read -r line; do
    id=$(stimulus_id "$line")
    [ -n "$id" ] && reply "$id" ok
  done
}
