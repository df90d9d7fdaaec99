#!/bin/sh
# `jailrun serve --provider NAME` and `jailrun mcp --provider NAME`: the
# agent API through a provider plugin (jailrun-provider(7)) instead of a
# local session.  The stub provider (tests/helpers/provider-stub.c) runs
# commands on the host and answers every file method ENOTSUP; the command
# provider (with tests/integration/provider-test.py, which logs its
# requests) has working file methods.  Requests go through rpc-driver.py
# as in serve.sh.
. "$JR_SRCDIR/tests/integration/lib.sh"

BUILD=$(dirname "$JAILRUN")
PROV=$JR_TOP/providers
BIN=$JR_TOP/bin
mkdir -p "$PROV" "$BIN"
cp "$JR_STUB_PROVIDERS/stub.so" "$PROV/"
for p in command; do
	[ -f "$BUILD/.libs/$p.so" ] && cp "$BUILD/.libs/$p.so" "$PROV/"
done
cp "$JR_SRCDIR/tests/integration/provider-test.py" "$BIN/"
DRIVER=$BIN/rpc-driver.py
cp "$JR_SRCDIR/tests/integration/rpc-driver.py" "$DRIVER"
chmod -R a+rX "$PROV" "$BIN"
T=$BIN/provider-test.py

. "$JR_SRCDIR/tests/integration/kv.sh"

# rpc MODE ARGS <SCRIPT: `jailrun MODE --provider ... ARGS` (MODE serve or
# mcp) driven by rpc-driver.py as the case's user, in the workspace; the
# driver's KEY=JSON lines in $OUT, stderr in $ERR, its status in RC.
rpc() {
	mode=$1
	shift
	script=$(dirname "$WS")/script
	cat >"$script"
	if [ "$JR_MODE" = nobody ]; then
		set -- setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_UID" --clear-groups -- "$JR_BIN" "$mode" "$@"
	else
		set -- "$JR_BIN" "$mode" "$@"
	fi
	(cd "$WS" && env HOME="$FIXHOME" JAILRUN_PROVIDER_PATH="$PROV" timeout -k 5 300 \
		python3 "$DRIVER" --timeout 30 -- "$@") <"$script" >"$OUT" 2>"$ERR"
	RC=$?
}

error_is() { has "$1.error.code" "$2"; }
# The driver ran the script to its end and the server exited with STATUS.
ended() { test "${RC:-1}" -eq 0 && has 'done' true && has exit "$1"; }
# KEY is a result (and no error).
succeeded() {
	if grep -q "^$(keyre "$1")\.result=" "$OUT" && ! grep -q "^$(keyre "$1")\.error=" "$OUT"; then
		return 0
	fi
	_got "$1"
	return 1
}
message_has() { val "$1.error.message" | grep -qF -- "$2" || { _got "$1"; return 1; }; }
val_has() { val "$1" | grep -qF -- "$2" || { _got "$1"; return 1; }; }
num() {
	v=$(val "$1")
	case $v in '' | *[!0-9-]*) _got "$1"; return 1 ;; esac
	test "$v" "$2" "$3" || { _got "$1"; return 1; }
}

case_stub_exec() {
	rpc serve --policy strict --provider stub <<'EOF'
call info info
call a exec {"command":"echo out; echo err >&2; exit 3"}
call b exec {"argv":["/bin/sh","-c","cat; pwd"],"stdin":"piped\n"}
call k exec {"command":"kill -9 $$"}
call big exec {"command":"head -c 100000 /dev/zero | tr '\\0' y","maxOutputBytes":10}
send slow exec {"command":"sleep 1; echo slow"}
send fast exec {"command":"echo fast"}
wait fast slow
send t exec {"command":"sleep 47","timeoutMs":300}
wait t
send c exec {"command":"sleep 47"}
sleep 0.3
call x cancel {"id":"c"}
wait c
call after exec {"command":"echo still-serving"}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "info names the provider" has info.result.provider '"stub"'
	check "and no session" has info.result.session null
	check "exec: the exit code comes back" has a.result.exitCode 3
	check "its stdout" has a.result.stdout '"out\n"'
	check "its stderr" has a.result.stderr '"err\n"'
	check "argv, stdin given, and the workspace as cwd" has b.result.stdout "\"piped\n$WS\n\""
	check "a command killed by a signal: exitCode null, signal SIGKILL" \
		lines k.result.exitCode=null 'k.result.signal="SIGKILL"'
	check "maxOutputBytes cuts stdout, truncated says so" \
		lines 'big.result.stdout="yyyyyyyyyy"' big.result.truncated=true
	check "execs run concurrently: the fast one answers first" \
		sh -c "[ $(val fast.order) -lt $(val slow.order) ]"
	check "and the slow one completes" has slow.result.stdout '"slow\n"'
	check "timeoutMs: timedOut, killed" lines t.result.timedOut=true 't.result.signal="SIGKILL"'
	check "within the timeout and the grace (under 5 s)" num t.ms -lt 5000
	check "cancel: the exec answers cancelled (-32800)" error_is c -32800
	check "the server goes on serving" has after.result.stdout '"still-serving\n"'
	check "nothing of the stub's commands is left running" gone_within_5s "sleep 47"
}

case_stub_files() {
	rpc serve --policy strict -D 'guard read-before-write' --provider stub <<'EOF'
call r readFile {"path":"x.txt"}
call w writeFile {"path":"new.txt","content":"x"}
call l readdir {"path":"."}
call g glob {"pattern":"*"}
call gr grep {"pattern":"x"}
call p readFile {}
call a exec {"command":"echo alive"}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "readFile on the stub: a file error (-32001)" error_is r -32001
	check "with errno ENOTSUP" has r.error.data.errno '"ENOTSUP"'
	check "and a message naming the provider and the path" message_has r "provider stub: readFile x.txt"
	check "readdir: the same" has l.error.data.errno '"ENOTSUP"'
	check "writeFile under guard read-before-write: refused (the stub cannot say the file is new)" \
		error_is w -32002
	check "glob: not available through a provider (-32000)" error_is g -32000
	check "saying so" message_has g "not available through provider stub"
	check "grep: the same" error_is gr -32000
	check "a file method without path: invalid params" error_is p -32602
	check "exec still works after" has a.result.stdout '"alive\n"'
}

case_stub_mcp() {
	rpc mcp --policy strict --provider stub <<'EOF'
call init initialize {"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}
notify notifications/initialized
call b tools/call {"name":"bash","arguments":{"command":"echo hello; exit 2"}}
call t tools/call {"name":"bash","arguments":{"command":"sleep 47","timeoutMs":300}}
call r tools/call {"name":"read_file","arguments":{"path":"x.txt"}}
call g tools/call {"name":"glob","arguments":{"pattern":"*"}}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "initialize answers" has init.result.serverInfo.name '"jailrun"'
	check "bash: output and exit code" has b.result.content.0.text '"hello\n\n[exit code 2]"'
	check "not an error" has b.result.isError false
	check "bash with timeoutMs: timed out" val_has t.result.content.0.text "[timed out: killed]"
	check "read_file on the stub: isError" has r.result.isError true
	check "naming the provider, the path and the stub's message" \
		val_has r.result.content.0.text "provider stub: readFile x.txt: not in the stub"
	check "glob: isError" has g.result.isError true
	check "not available through the provider" val_has g.result.content.0.text "not available through provider stub"
}

case_refusals() {
	rpc serve --policy strict --provider stub --provider-opt refuse=net <<'EOF'
exited
EOF
	check "a clause the provider does not enforce: serve refuses to start (exit 125)" has exited 125
	check "naming the clause" contains "$ERR" "is not enforced by provider stub"
	rpc serve --policy strict --provider stub --session nope <<'EOF'
exited
EOF
	check "--provider with --session is still refused (125)" has exited 125
	check "saying so" contains "$ERR" "not with --session"
}

case_command_files() {
	if [ ! -f "$PROV/command.so" ]; then
		skip "command provider: serve" "command.so was not built"
		return
	fi
	log=$WS/../requests.log
	rm -f "$log"
	printf 'line one\nline two\n' >"$WS/existing.txt"
	chown -R "$CASE_UID:$CASE_UID" "$WS"
	rpc serve --policy strict -D 'guard read-before-write' --provider command \
		--provider-opt "program=$T" --provider-opt "log=$log" <<'EOF'
call a exec {"command":"echo out; exit 4"}
call w0 writeFile {"path":"existing.txt","content":"clobbered\n"}
call w writeFile {"path":"sub/dir/new.txt","content":"hello\n","createDirs":true}
call cat exec {"command":"cat sub/dir/new.txt"}
call r readFile {"path":"sub/dir/new.txt"}
call r2 readFile {"path":"sub/dir/new.txt","maxBytes":2}
call r3 readFile {"path":"sub/dir/new.txt","encoding":"base64"}
call s stat {"path":"sub/dir/new.txt"}
call l readdir {"path":"sub"}
call e exists {"path":"sub/nope"}
call m mkdir {"path":"made/deep","recursive":true}
call rm1 rm {"path":"sub","recursive":true}
call rm2 rm {"path":"sub","force":true}
call rm3 rm {"path":"sub"}
call e2 exists {"path":"sub"}
call t exec {"command":"sleep 47","timeoutMs":300}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "exec through the command provider" lines a.result.exitCode=4 'a.result.stdout="out\n"'
	check "guard read-before-write holds: an existing file not read is refused" error_is w0 -32002
	check "and left alone" contains "$WS/existing.txt" "line one"
	check "writeFile with createDirs" has w.result.bytesWritten 6
	check "wrote the file" has cat.result.stdout '"hello\n"'
	check "readFile reads it" lines 'r.result.content="hello\n"' r.result.size=6 r.result.truncated=false
	check "maxBytes cuts it (truncated, the whole size)" \
		lines 'r2.result.content="he"' r2.result.size=6 r2.result.truncated=true
	check "base64 encoding" has r3.result.contentBase64 '"aGVsbG8K"'
	check "stat" lines s.result.size=6 s.result.isFile=true s.result.isDirectory=false s.result.mode=420
	check "readdir lists the entries, typed" lines 'l.result.entries.0.name="dir"' l.result.entries.0.isDirectory=true
	check "exists: false for a missing path" has e.result.exists false
	check "mkdir recursive made the directories" test -d "$WS/made/deep"
	check "rm recursive removed the tree" test ! -e "$WS/sub"
	check "rm force on a missing path: no error" succeeded rm2
	check "rm of a missing path: ENOENT" has rm3.error.data.errno '"ENOENT"'
	check "exists after rm" has e2.result.exists false
	check "timeoutMs goes to the provider: timed out" has t.result.timedOut true
	check "the provider was opened once and closed at the end of input" python3 -c '
import json, sys
ops = [json.loads(l)["operation"] for l in open(sys.argv[1])]
assert ops.count("open") == 1 and ops.count("close") == 1 and ops[-1] == "close", ops
' "$log"
}

case_command_mcp_edit() {
	if [ ! -f "$PROV/command.so" ]; then
		skip "command provider: mcp" "command.so was not built"
		return
	fi
	printf 'alpha\nbeta\n' >"$WS/f.txt"
	chown -R "$CASE_UID:$CASE_UID" "$WS"
	rpc mcp --policy strict --provider command --provider-opt "program=$T" <<'EOF'
call init initialize {"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}
call r tools/call {"name":"read_file","arguments":{"path":"f.txt"}}
call e tools/call {"name":"edit_file","arguments":{"path":"f.txt","old_string":"beta","new_string":"gamma"}}
call w tools/call {"name":"write_file","arguments":{"path":"g.txt","content":"new\n"}}
call l tools/call {"name":"list_directory","arguments":{}}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "read_file" has r.result.content.0.text '"alpha\nbeta\n"'
	check "edit_file (read_file + write_file through the provider)" has e.result.content.0.text '"edited"'
	check "edited on disk" test "$(cat "$WS/f.txt")" = "$(printf 'alpha\ngamma')"
	check "write_file" test "$(cat "$WS/g.txt" 2>/dev/null)" = new
	check "list_directory" has l.result.content.0.text '"f.txt\ng.txt\n"'
}

case_command_sigterm() {
	if [ ! -f "$PROV/command.so" ]; then
		skip "command provider: SIGTERM" "command.so was not built"
		return
	fi
	log=$WS/../requests.log
	rm -f "$log"
	rpc serve --policy strict --provider command --provider-opt "program=$T" --provider-opt "log=$log" <<'EOF'
send s exec {"command":"sleep 47"}
sleep 0.5
signal TERM
exited
EOF
	check "SIGTERM ends the service (exit 0)" has exited 0
	check "the running exec is stopped" gone_within_5s "sleep 47"
	check "and the provider closed" python3 -c '
import json, sys
ops = [json.loads(l)["operation"] for l in open(sys.argv[1])]
assert ops[0] == "open" and ops[-1] == "close", ops
' "$log"
}


# shellcheck disable=SC2086
run_cases ${PROVIDER_SERVE_CASES:-case_stub_exec case_stub_files case_stub_mcp case_refusals \
	case_command_files case_command_mcp_edit case_command_sigterm}
