#!/bin/sh
# Persistent sessions: --session NAME runs commands in one jail that
# stays up; only its own user can reach it; --stop and the supervisor's
# death leave nothing behind.
. "$JR_SRCDIR/tests/integration/lib.sh"

# A session name unique to this case and user (sessions are per user).
sname() { echo "t$$-$JR_MODE-$1"; }

# The caller's sessions directory (XDG_RUNTIME_DIR is not set here).
sdir() { echo "/tmp/jailrun-$CASE_UID"; }

case_session_persists() {
	n=$(sname persist)
	jr --session "$n" --policy strict -- sh -c 'echo one > /tmp/state; (sleep 1001 &) ; echo started'
	check_rc 0 "the first command starts the session and runs"
	check "its output reaches the caller" contains "$OUT" started
	jr --session "$n" --policy strict -- sh -c 'cat /tmp/state; ps -eo args | grep -c "^sleep 1001"'
	check_rc 0 "a second command runs in the same session"
	check "it sees the jail's /tmp as the first left it" contains "$OUT" one
	check "and the background process the first left running" test "$(tail -1 "$OUT")" = 1
	check "the host's /tmp was not written" test ! -e /tmp/state
	jr --session "$n" --policy strict -- sh -c 'exit 7'
	check_rc 7 "the command's exit status is jailrun's"
	jr --session "$n" --policy strict -- sh -c 'kill -KILL $$'
	check_rc 137 "a signal is 128+N"
	jr --session "$n" --policy strict -- no-such-command-xyz
	check_rc 127 "a missing command is 127"
	echo piped-input > "$WS/in"
	jr_stdin "$WS/in" --session "$n" --policy strict -- cat
	check "stdin is the caller's" test "$(cat "$OUT")" = piped-input
	jr sessions
	check "jailrun sessions lists it" contains "$OUT" "$n"
	jr --session "$n" --stop
	check_rc 0 "--stop stops it"
	check "and no process of it is left" gone_within_5s "sleep 1001"
	jr sessions
	check "it is no longer listed" lacks "$OUT" "$n"
	check "its state directory is gone" test ! -e "$(sdir)/$n"
	jr --session "$n" --stop
	check_rc 1 "stopping a session that does not run says so (1)"
	check "naming it" contains "$ERR" "no session $n"
}

case_session_secrets_and_policy() {
	n=$(sname secrets)
	JR_ENV="MY_API_TOKEN=tok-should-not-pass" jr --session "$n" --policy strict -- sh -c 'cat ~/.ssh/id_rsa; env'
	check "the masked key is not readable in a session" lacks "$OUT" jailrun-test-secret
	check "a secret-named variable is scrubbed" sh -c "! grep -q '^MY_API_TOKEN=' '$OUT'"
	jr --session "$n" --policy strict -- sh -c 'echo x > /etc/x'
	check "the system is read-only in a session" test "$RC" -ne 0 -a ! -e /etc/x
	jr --session "$n" --policy strict -- unshare -U true
	check "strict's seccomp rules hold for session commands" test "$RC" -ne 0
	jr --session "$n" --policy default -- true
	check_rc 125 "a command under another policy is refused"
	check "naming the session's policy" contains "$ERR" "runs policy strict"
	jr --session "$n" --stop
}

case_session_other_user() {
	[ "$JR_MODE" = root ] || { skip "another user cannot reach root's session" "runs as root only"; return 0; }
	n=$(sname private)
	# A runtime directory of this case's own: its modes are opened up
	# below, which must not touch the sessions of tests running alongside.
	rt=$(dirname "$WS")/runtime
	mkdir -p "$rt" && chmod 700 "$rt"
	JR_ENV="XDG_RUNTIME_DIR=$rt"
	sdir() { echo "$rt/jailrun"; }
	jr --session "$n" --policy strict -- true
	check "the state directory is 0700" test "$(stat -c %a "$(sdir)/$n")" = 700
	check "the socket is 0600 or stricter" test "$(stat -c %a "$(sdir)/$n/ctl.sock")" -le 600
	# nobody, even handed the socket by path and with a world-readable
	# copy of the directory, cannot connect: the supervisor checks the
	# peer's uid.
	sock=$(sdir)/$n/ctl.sock
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("refused", e.errno)' "$sock" 2>&1)
	check "another user cannot even open the socket" sh -c "echo '$out' | grep -q refused"
	chmod 711 "$rt" "$(sdir)" "$(sdir)/$n"
	chmod 666 "$sock"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c '
import socket, struct, sys, json
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
req = json.dumps({"op": "info"}).encode()
s.settimeout(3)
try:
    s.sendall(struct.pack("=I", len(req)) + req)
    data = s.recv(100)
    print("answer" if data else "closed")
except OSError:
    print("closed")' "$sock" 2>&1)
	check "with the modes opened up, the supervisor still hangs up on another uid" test "$out" = closed
	chmod 700 "$(sdir)" "$(sdir)/$n"
	chmod 600 "$sock"
	jr --session "$n" --stop
	JR_ENV=
	sdir() { echo "/tmp/jailrun-$CASE_UID"; }
}

case_session_dies_with_supervisor() {
	n=$(sname dies)
	jr --session "$n" --policy strict -- sh -c '(sleep 1002 &); true'
	check_rc 0 "a session with a background process"
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$(sdir)/$n/info.json")
	kill -KILL "$pid"
	check "SIGKILL of the session's supervisor takes the whole jail with it" gone_within_5s "sleep 1002"
	jr --session "$n" --policy strict -- echo fresh
	check "the same name then starts a fresh session over the stale socket" contains "$OUT" fresh
	jr --session "$n" --stop
}

case_session_idle() {
	n=$(sname idle)
	jr --session "$n" --idle 1 --policy strict -- sh -c '(sleep 1003 &); true'
	check_rc 0 "a session with --idle 1"
	sleep 2.5
	jr sessions
	check "it stopped after a second with nothing running" lacks "$OUT" "$n"
	check "with its processes" gone_within_5s "sleep 1003"
	jr --session "$n" --idle 1 --policy strict -- sh -c 'sleep 2; echo still-here'
	check "a command running longer than the idle time is not cut" contains "$OUT" still-here
	jr --session "$n" --stop
}

case_session_per_command_limits_refused() {
	n=$(sname limits)
	jr --session "$n" --timeout 5 --policy strict -- touch "$WS/ran"
	check_rc 125 "limit time, which a session's commands would not get, is refused"
	check "nothing ran" test ! -e "$WS/ran"
	jr --session "$n" -D 'limit output 1K' --policy strict -- touch "$WS/ran"
	check_rc 125 "so is limit output"
	jr sessions
	check "and no session was left started" lacks "$OUT" "$n"
}

case_session_bad_names() {
	jr --session ../escape --policy strict -- true
	check_rc 125 "a name with a slash is refused"
	jr --session .hidden --policy strict -- true
	check_rc 125 "a name starting with a dot is refused"
}

run_cases case_session_persists case_session_secrets_and_policy case_session_other_user \
	case_session_dies_with_supervisor case_session_idle case_session_per_command_limits_refused \
	case_session_bad_names
