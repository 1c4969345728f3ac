# Announces itself, then crashes (SIGSEGV) on the first stimulus.
. "$(dirname "$0")/adapter-lib.sh"
hello '["connect","reset-identity","background-wake"]'
while IFS= read -r line; do
  echo "about to crash" >&2
  kill -SEGV $$
done
