# Never says hello.
echo "thinking..." >&2
while :; do sleep 1; done
