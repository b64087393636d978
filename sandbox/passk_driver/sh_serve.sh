# The candidate's side of a judged Bash program (see programs.py): sources the
# candidate's code, then answers the judge's calls of its entry point until the judge
# hangs up. A call is its argument count and arguments, each ended by a NUL, on
# descriptor 3; the answer is the exit status and what the function printed (as `$(...)`
# takes it, as MultiPL-E's tests do), each ended by a NUL, on descriptor 4.
#
#     bash sh_serve.sh SOURCE ENTRY_POINT
__passk_entry=$2
source "$1"
if declare -F "$__passk_entry" >/dev/null; then
    builtin printf 'ready\0001\0' >&4
else
    builtin printf 'ready\0000\0' >&4
fi
while IFS= builtin read -r -d '' __passk_count <&3; do
    __passk_args=()
    for ((__passk_i = 0; __passk_i < __passk_count; __passk_i++)); do
        IFS= builtin read -r -d '' __passk_arg <&3 || exit 0
        __passk_args+=("$__passk_arg")
    done
    __passk_out=$("$__passk_entry" "${__passk_args[@]}")
    __passk_status=$?
    builtin printf '%s\0%s\0' "$__passk_status" "$__passk_out" >&4
done
exit 0
