# Says hello, then never answers a stimulus.
. "$(dirname "$0")/adapter-lib.sh"
hello '["connect","reset-identity","background-wake"]'
while IFS= read -r line; do
  :
done
