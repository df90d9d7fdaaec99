#!/bin/sh
# Terminals: no keystroke injection into the caller's terminal, and a
# usable interactive shell (job control, window size) on the jail's pty.
. "$JR_SRCDIR/tests/integration/lib.sh"

# A copy nobody can read (the source tree may be out of its reach).
cp "$JR_SRCDIR/tests/integration/pty-run.py" "$JR_TOP/pty-run.py"
chmod 644 "$JR_TOP/pty-run.py"
PTY_RUN="python3 $JR_TOP/pty-run.py"
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

case_tty_never_given_to_the_jail() {
	# A harness that hands the jail a terminal on stdin only, stdout being a
	# pipe, in a session with no controlling terminal: the jail must still
	# not be able to make that terminal its own and type into it.
	PTY_RUN="python3 $JR_TOP/pty-run.py"
	steal='import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    for c in b"echo PWNED\n":
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    print("typed")
except OSError as e:
    print("refused", e.errno)'
	jr_pty --pipe-stdout --no-ctty -- "$JR_BIN" --policy permissive -D 'workspace ro' -D 'home tmpfs' -- python3 -c "$steal"
	check "nothing is queued on the caller's terminal, even with no seccomp filter" contains "$ERR" "queued=0"
	check "stdout, a pipe, still reaches the caller directly" sh -c "grep -q -e typed -e refused '$OUT'"
	echo hi | (cd "$WS" && as_user env HOME="$FIXHOME" timeout 10 "$JR_BIN" --pty -- sh -c 'cat; echo after-eof') >"$OUT" 2>"$ERR"
	RC=$?
	check "--pty with stdin at EOF gives the command EOF (no hang)" contains "$OUT" after-eof
	printf 'a\nb' | (cd "$WS" && as_user env HOME="$FIXHOME" timeout 10 "$JR_BIN" --pty -- wc -l) >"$OUT" 2>"$ERR"
	RC=$?
	check "a last line without a newline still reaches EOF" test "$RC" -eq 0
	jr_pty -- sh -c "'$JR_BIN' --pty yes | head -1; echo pipeline-ended"
	check "a command on the pty whose reader went away ends (no spinning)" contains "$OUT" pipeline-ended
}

run_cases case_tty_never_given_to_the_jail case_tiocsti_without_pty case_tiocsti_with_pty case_job_control case_window_size
