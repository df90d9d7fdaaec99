#!/bin/sh
# Terminals: no keystroke injection into the caller's terminal, and a
# usable interactive shell (job control, window size) on the jail's pty.
. "$JR_SRCDIR/tests/integration/lib.sh"

PTY_RUN="python3 $JR_SRCDIR/tests/integration/pty-run.py"
INJECT='import fcntl, termios
try:
    for c in b"echo INJECTED\n":
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    print("tiocsti-ok")
except OSError as e:
    print("tiocsti-failed", e.errno)'

# Runs jailrun on a fresh pty as the case's user; stderr's last line is queued=N.
jr_pty() {
	(cd "$WS" && HOME="$FIXHOME" as_user $PTY_RUN "$@") >"$OUT" 2>"$ERR"
	RC=$?
}

case_tiocsti_without_pty() {
	cp "$JR_SRCDIR/tests/integration/pty-run.py" "$JR_TOP/pty-run.py" 2>/dev/null
	PTY_RUN="python3 $JR_TOP/pty-run.py"
	# Control: the same injection outside jailrun must work, or this host
	# forbids TIOCSTI anyway (dev.tty.legacy_tiocsti=0) and the test
	# could not fail.
	(cd "$WS" && as_user $PTY_RUN -- python3 -c "$INJECT") >"$OUT" 2>"$ERR"
	if ! contains "$ERR" "queued=14"; then
		skip "TIOCSTI cannot reach the caller's terminal (--no-pty)" "this host refuses TIOCSTI even outside a jail"
		return
	fi
	jr_pty -- "$JR_BIN" --no-pty -- python3 -c "$INJECT"
	check "TIOCSTI on the caller's terminal fails inside (--no-pty)" contains "$OUT" "tiocsti-failed 1"
	check "nothing was queued on the caller's terminal" contains "$ERR" "queued=0"
}

case_tiocsti_with_pty() {
	PTY_RUN="python3 $JR_TOP/pty-run.py"
	jr_pty -- "$JR_BIN" -- python3 -c "$INJECT"
	check "with a pty, the command's TIOCSTI reaches only the jail's pty" contains "$ERR" "queued=0"
	jr_pty -- "$JR_BIN" -- sh -c 'tty; ls /dev/pts | tr "\n" " "'
	check "the command's terminal is the jail's own pty" contains "$OUT" "/dev/pts/0"
	check "the host's ptys are not visible" contains "$OUT" "0 ptmx "
}

case_job_control() {
	PTY_RUN="python3 $JR_TOP/pty-run.py"
	jr_pty -- "$JR_BIN" -- bash --norc -i -c 'set -o | grep monitor; sleep 5 & jobs; kill %1; echo done-jobs'
	check "an interactive bash has job control" sh -c "grep -E 'monitor[[:space:]]+on' '$OUT' >/dev/null"
	check "without complaining about the terminal" lacks "$OUT" "no job control"
	check "jobs are listed" contains "$OUT" "Running"
	check "the shell finished" contains "$OUT" done-jobs
}

case_window_size() {
	PTY_RUN="python3 $JR_TOP/pty-run.py"
	jr_pty --rows 33 --cols 77 -- "$JR_BIN" -- stty size
	check "the caller's window size reaches the jail's pty" contains "$OUT" "33 77"
	check_rc 0 "and the status comes back through the pty path"
	jr_pty -- "$JR_BIN" -- sh -c 'exit 5'
	check_rc 5 "exit status through the pty path"
}

run_cases case_tiocsti_without_pty case_tiocsti_with_pty case_job_control case_window_size
