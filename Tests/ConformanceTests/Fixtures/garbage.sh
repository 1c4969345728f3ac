# Prints garbage on stdout before and after its hello, then behaves.
. "$(dirname "$0")/adapter-lib.sh"
echo "Starting client v1.2 (this line is not JSON)"
echo '{"type":"banner"}'
hello '["connect","reset-identity","background-wake"]'
echo '[1,2,3]'
while IFS= read -r line; do
  id=$(stimulus_id "$line")
  echo "handling $line"
  [ -n "$id" ] && reply "$id" ok
done
