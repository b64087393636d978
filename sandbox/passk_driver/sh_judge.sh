# passk's judge for Bash (see programs.py): runs the problem's own helpers and tests
# with, in place of the entry point, a function that sends each call's arguments to the
# candidate's process and prints and returns its answer. The tests pass as MultiPL-E's
# harness passes them, by exiting 0; the verdict goes to descriptor 5, which only this
# process holds, as one line: the status, a tab, the detail.
#
#     bash sh_judge.sh ENTRY_POINT    (helpers on descriptor 6, tests on 7)
__passk_entry=$1
__passk_record() {
    # The first verdict stands; a subshell's (a call in `$(...)`) reaches the pipe too.
    builtin printf '%s\t%s\n' "$1" "${2//$'\n'/ }" >&5
}
__passk_call() {
    builtin printf '%s\0' "$#" "$@" >&3 2>/dev/null || {
        __passk_record gone "the candidate's process ended before it was called"
        exit 0
    }
    # Bytes, not characters: an answer that ends inside a character must not take the
    # NUL after it along.
    local status out LC_ALL=C
    IFS= builtin read -r -d '' status <&4 && IFS= builtin read -r -d '' out <&4 || {
        __passk_record gone "the candidate's process ended before it answered"
        exit 0
    }
    [[ $status =~ ^[0-9]{1,3}$ ]] || status=1
    builtin printf '%s' "$out"
    return "$status"
}
__passk_ended() {
    local status=$1 command=$2
    if [[ $status == 0 ]]; then
        __passk_record passed ""
    else
        __passk_record failed "the tests exited with status $status at: $command"
    fi
}
IFS= builtin read -r -d '' __passk_ready <&4 && IFS= builtin read -r -d '' __passk_defined <&4 || {
    __passk_record gone "the candidate's process ended before it was ready"
    exit 0
}
if [[ $__passk_ready != ready ]]; then
    __passk_record error "sent the judge a message before the tests"
    exit 0
fi
if [[ $__passk_defined != 1 ]]; then
    __passk_record failed "$__passk_entry: command not found (the candidate does not define it)"
    exit 0
fi
eval "$__passk_entry() { __passk_call \"\$@\"; }"
# Read whole, up to the end (no NUL is in a script).
IFS= builtin read -r -d '' __passk_helpers <&6
IFS= builtin read -r -d '' __passk_tests <&7
exec 6<&- 7<&-
if [[ -z ${__passk_tests//[[:space:]]/} ]]; then
    __passk_record error "the judge was given no tests"
    exit 0
fi
# The last command that failed, in the tests' functions too, names the failure.
set -E
trap '__passk_failed_at=$BASH_COMMAND' ERR
trap '__passk_ended $? "${__passk_failed_at:-$BASH_COMMAND}"' EXIT
eval "$__passk_helpers"
eval "$__passk_tests"
