# Speaks an adapter protocol version the harness does not know.
printf '{"type":"hello","adapterProtocol":99,"stimuli":["connect"]}\n'
while IFS= read -r line; do :; done
