# Says hello with a short list; answers reset-identity with error and everything else with
# unsupported.
. "$(dirname "$0")/adapter-lib.sh"
hello '["connect","reset-identity","background-wake"]'
while IFS= read -r line; do
  id=$(stimulus_id "$line")
  case "$(stimulus_name "$line")" in
    reset-identity) reply "$id" error "keychain locked" ;;
    *) reply "$id" unsupported "not in this build" ;;
  esac
done
