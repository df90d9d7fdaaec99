#!/bin/sh
# Exit statuses follow env(1)/timeout(1)/docker run, and data passes through.
. "$JR_SRCDIR/tests/integration/lib.sh"

case_exit_code() {
	jr -- sh -c 'exit 7'
	check_rc 7 "sh -c 'exit 7' exits 7"
	jr -- true
	check_rc 0 "true exits 0"
	jr -- false
	check_rc 1 "false exits 1"
}

case_killed_by_signal() {
	jr -- sh -c 'kill -9 $$'
	check_rc 137 "a command killed by SIGKILL gives 137"
	jr -- sh -c 'kill -TERM $$'
	check_rc 143 "a command killed by SIGTERM gives 143"
}

case_not_found() {
	jr -- no-such-command-xyz
	check_rc 127 "a missing command gives 127"
	check "the missing command is named on stderr" contains "$ERR" "no-such-command-xyz: command not found"
}

case_not_executable() {
	printf '#!/bin/sh\necho ran\n' >"$WS/script"
	chmod 644 "$WS/script"
	chown "$CASE_UID" "$WS/script"
	jr -- ./script
	check_rc 126 "a non-executable file gives 126"
	check "it did not run" lacks "$OUT" "ran"
}

case_setup_failure() {
	jr --ro /nonexistent/jailrun-path -- touch "$WS/ran"
	check_rc 125 "a failed setup step gives 125"
	check "the failing step is named in one line" test "$(wc -l <"$ERR")" -eq 1
	check "the message names the path and errno" contains "$ERR" "/nonexistent/jailrun-path: No such file or directory"
	check "nothing ran" test ! -e "$WS/ran"
}

case_stdio_passthrough() {
	head -c 1048576 /dev/urandom >"$WS/in.bin"
	jr_stdin "$WS/in.bin" -- cat
	check_rc 0 "cat of 1 MiB of random bytes succeeds"
	check "stdin reaches the command and stdout returns byte for byte" cmp -s "$WS/in.bin" "$OUT"
	jr -- sh -c 'echo to-out; echo to-err >&2'
	check "stdout and stderr stay separate" sh -c "[ \"\$(cat '$OUT')\" = to-out ] && [ \"\$(cat '$ERR')\" = to-err ]"
}

case_closed_stdio() {
	(cd "$WS" && as_user env HOME="$FIXHOME" "$JR_BIN" -- sh -c 'exit 7') <&- >"$OUT" 2>"$ERR"
	RC=$?
	check_rc 7 "a closed stdin does not break the jail"
	(cd "$WS" && as_user env HOME="$FIXHOME" "$JR_BIN" -- sh -c 'exit 8') >&- 2>&-
	RC=$?
	check_rc 8 "closed stdout and stderr neither"
}

case_stopped_command() {
	jr_background -- sh -c 'kill -STOP $$'
	sleep 0.5
	kill -TERM "$JR_PID"
	i=0
	while kill -0 "$JR_PID" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	check "a command that stopped itself still ends on SIGTERM to jailrun" sh -c "! kill -0 $JR_PID 2>/dev/null"
	wait "$JR_PID"
	RC=$?
	check_rc 143 "with 143"
}

run_cases case_closed_stdio case_stopped_command case_exit_code case_killed_by_signal case_not_found case_not_executable \
	case_setup_failure case_stdio_passthrough
