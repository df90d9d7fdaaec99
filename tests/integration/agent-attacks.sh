#!/bin/sh
# Attacks on sessions and the agent API (from an adversarial review):
# a jail driving a session of the same user, truncated long paths, and
# traps that would freeze the server.
. "$JR_SRCDIR/tests/integration/lib.sh"

# Sends JSON-RPC lines (stdin) to `jailrun serve --policy strict` as the
# case's user and prints the answers.
serve() {
	(cd "$WS" && as_user env HOME="$FIXHOME" timeout 30 "$JR_BIN" serve --policy strict) >"$OUT" 2>"$ERR"
	RC=$?
}

case_jail_cannot_drive_a_session() {
	n="atk$$-$JR_MODE"
	jr --session "$n" --policy permissive -- true
	check_rc 0 "a permissive session runs"
	base=/tmp/jailrun-$CASE_UID
	# A strict jail that can see the session's socket (its directory bound
	# in) and whose processes have the caller's uid (as nobody) still
	# cannot get a request through.
	jr --policy strict --rw "$base" -- python3 -c '
import socket, struct, json, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
try:
    s.connect(sys.argv[1])
    req = json.dumps({"op": "stop"}).encode()
    s.sendall(struct.pack("=I", len(req)) + req)
    print("answer" if s.recv(100) else "closed")
except OSError as e:
    print("closed", e.errno)' "$base/$n/ctl.sock"
	check "a process of another jail is hung up on" contains "$OUT" closed
	jr sessions
	check "and the session is still running" contains "$OUT" "$n"
	jr --session "$n" --stop
}

case_long_paths_are_not_cut() {
	mkdir -p "$WS/keep/inner"
	echo precious > "$WS/keep/inner/file"
	chown -R "$CASE_UID" "$WS/keep"
	long=$(python3 -c 'print("keep" + "/" * 4100 + "nonexistent")')
	printf '{"jsonrpc":"2.0","id":1,"method":"rm","params":{"path":"%s","recursive":true,"force":true}}\n' "$long" >"$WS/../req"
	serve <"$WS/../req"
	check "rm of an over-long path is an error" contains "$OUT" '"errno":"ENAMETOOLONG"' 
	check "and did not remove a shorter one" test -f "$WS/keep/inner/file"
}

case_traps_do_not_freeze_the_server() {
	as_user mkfifo "$WS/fifo"
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"grep","params":{"pattern":"x","path":"fifo"}}' \
		'{"jsonrpc":"2.0","id":2,"method":"writeFile","params":{"path":"fifo","content":"x"}}' \
		'{"jsonrpc":"2.0","id":3,"method":"glob","params":{"pattern":"**/**/**/**/**/**/**/**/**/**/**/**/nomatch"}}' \
		'{"jsonrpc":"2.0","id":4,"method":"info"}' >"$WS/../req"
	serve <"$WS/../req"
	check_rc 0 "a FIFO and a backtracking glob do not hang serve"
	check "grep of a FIFO answers" contains "$OUT" '"id":1,"result"'
	check "writeFile to a FIFO is an error, not a hang" contains "$OUT" '"id":2,"error"'
	check "the server still answers afterwards" contains "$OUT" '"id":4,"result"'
}

run_cases case_jail_cannot_drive_a_session case_long_paths_are_not_cut case_traps_do_not_freeze_the_server
