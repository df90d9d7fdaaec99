#!/bin/sh
# `jailrun serve` (JSON-RPC 2.0 over stdio, /work/notes/rpc-spec.md), end to
# end: each case hands a script of requests to rpc-driver.py, which starts
# `jailrun serve --policy strict` as the case's user, sends the requests and
# prints every response as KEY.FIELD=JSON lines (see rpc-driver.py); the
# checks below read those lines and look at the host.  A script can stop at
# `sync NAME` until the shell has looked at the host's processes and says
# `release NAME`.
. "$JR_SRCDIR/tests/integration/lib.sh"

DRIVER=$JR_TOP/rpc-driver.py
cp "$JR_SRCDIR/tests/integration/rpc-driver.py" "$DRIVER"
chmod 644 "$DRIVER"

# Runs the driver with the script read from stdin, in the background, in the
# workspace with the fixture HOME; the server is `jailrun serve ARGS` as the
# case's user.  Its stdout (KEY=JSON lines) goes to $OUT, its stderr and the
# server's to $ERR.  rpc_wait waits for it and sets RC.
rpc_background() {
	case_dir=$(dirname "$WS")
	SYNC=$case_dir/sync
	rm -rf "$SYNC"
	mkdir -p "$SYNC"
	script=$case_dir/script
	cat >"$script"
	if [ "$JR_MODE" = nobody ]; then
		set -- setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_UID" --clear-groups -- "$JR_BIN" serve "$@"
	else
		set -- "$JR_BIN" serve "$@"
	fi
	# shellcheck disable=SC2086 # JR_ENV: NAME=VALUE words
	(cd "$WS" && env HOME="$FIXHOME" ${JR_ENV:-} timeout -k 5 300 \
		python3 "$DRIVER" --sync-dir "$SYNC" --timeout 30 -- "$@") <"$script" >"$OUT" 2>"$ERR" &
	RPC_PID=$!
}

rpc_wait() {
	wait "$RPC_PID"
	RC=$?
}

# rpc ARGS <SCRIPT: the same, waiting for its end.
rpc() {
	rpc_background "$@"
	rpc_wait
}

# Waits (up to 60 s) for the script to reach `sync NAME`.
wait_sync() {
	i=0
	while [ $i -lt 600 ]; do
		grep -qsxF "sync=\"$1\"" "$OUT" && return 0
		kill -0 "$RPC_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -qxF "sync=\"$1\"" "$OUT"
}

release() { touch "$SYNC/$1"; }

. "$JR_SRCDIR/tests/integration/kv.sh"
# KEY's value, a JSON string, without its quotes (no escapes expected).
sval() { val "$1" | sed 's/^"//; s/"$//'; }
# KEY's value (a JSON string) contains TEXT.
val_has() { val "$1" | grep -qF -- "$2" || { _got "$1"; return 1; }; }
# KEY's value is a number and holds the shell test OP N (e.g. -lt 1900).
num() {
	v=$(val "$1")
	case $v in '' | *[!0-9-]*) _got "$1"; return 1 ;; esac
	test "$v" "$2" "$3" || { _got "$1"; return 1; }
}
# KEY's value, parsed as JSON into v, makes the python3 expression EXPR true.
pyq() {
	val "$1" | python3 -c 'import json, sys; v = json.loads(sys.stdin.read() or "null"); sys.exit(not eval("(" + sys.argv[1] + ")"))' "$2" ||
		{ _got "$1"; return 1; }
}
# KEY is a JSON-RPC error with code CODE.
error_is() { has "$1.error.code" "$2"; }
# KEY is a result (and no error).
succeeded() {
	if grep -q "^$(keyre "$1")\.result=" "$OUT" && ! grep -q "^$(keyre "$1")\.error=" "$OUT"; then
		return 0
	fi
	_got "$1"
	return 1
}
# KEY's error message contains TEXT.
message_has() {
	val "$1.error.message" | grep -qF -- "$2" || { _got "$1"; return 1; }
}
# The driver ran the script to its end and the server exited with STATUS.
ended() { test "${RC:-1}" -eq 0 && has 'done' true && has exit "$1"; }

# Waits up to 5 s for at least one host process to match each TEXT.
running() {
	for t in "$@"; do
		i=0
		while [ $i -lt 50 ] && [ -z "$(pids_with "$t")" ]; do
			sleep 0.1
			i=$((i + 1))
		done
		[ -n "$(pids_with "$t")" ] || return 1
	done
}
all_gone() {
	for t in "$@"; do
		gone_within_5s "$t" || return 1
	done
}

sessions_of_user() { as_user env HOME="$FIXHOME" "$JR_BIN" sessions 2>&1; }
# `jailrun sessions` of the case's user names session NAME (a word of a line).
session_listed() { sessions_of_user | awk -v n="$1" '$1 == n { f = 1 } END { exit !f }'; }
# No session of the case's user serves this case's workspace.
no_session_here() {
	sessions_of_user | awk -v w="$WS" '$NF == w { f = 1 } END { exit f }'
}
session_here() { ! no_session_here; }
# ... and no longer within 5 s.
session_gone_within_5s() {
	i=0
	while [ $i -lt 50 ]; do
		session_listed "$1" || return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# A host file in the workspace, owned by the case's user.
ws_file() {
	mkdir -p "$(dirname "$WS/$1")"
	cat >"$WS/$1"
	chown -R "$CASE_UID:$CASE_UID" "$WS"
}

case_protocol() {
	rpc --policy strict <<'EOF'
call info info
raw parse {"jsonrpc":"2.0","id":1,"method":
call afterparse exec {"command":"echo still-serving"}
raw notobj 42
raw string "info"
raw nojsonrpc {"id":2,"method":"info"}
raw badversion {"jsonrpc":"1.0","id":3,"method":"info"}
raw nomethod {"jsonrpc":"2.0","id":4}
raw methodnum {"jsonrpc":"2.0","id":5,"method":7}
call unknown no/such/method
call both exec {"command":"true","argv":["true"]}
call nopath readFile {}
call twocontents writeFile {"path":"two.txt","content":"a","contentBase64":"YQ=="}
call snapshot snapshot
call restore restore
big big 17825792
call afterbig info
strays beforenotify
notify info
notify no/such/method
notify exec {"command":"echo notified"}
call afternotify info
sleep 0.5
strays notified
call intid1 exec {"command":"echo int"}
raw intid {"jsonrpc":"2.0","id":77,"method":"exists","params":{"path":"."}}
close
EOF
	check "the script ran to its end, the server exited 0 on EOF" ended 0
	check "info: version, session, policy strict with a sha256" \
		lines 'info.result.policy.name="strict"' info.id='"info"'
	check "info: policy.sha256 is 64 hex digits" like info.result.policy.sha256 '"[0-9a-f]{64}"'
	check "info: the workspace" has info.result.workspace "\"$WS\""
	check "info: session is a name" like info.result.session '"[A-Za-z0-9._-]+"'
	check "info: startedAt (RFC 3339)" like info.result.startedAt '"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}.*"'
	check "malformed JSON: -32700" error_is parse -32700
	check "with id null" has parse.id null
	check "and the next request is answered" has afterparse.result.stdout '"still-serving\n"'
	check "a number is not a request: -32600" error_is notobj -32600
	check "nor a string: -32600" error_is string -32600
	check "no jsonrpc member: -32600" error_is nojsonrpc -32600
	check "jsonrpc \"1.0\": -32600" error_is badversion -32600
	check "no method: -32600" error_is nomethod -32600
	check "a method that is not a string: -32600" error_is methodnum -32600
	check "an unknown method: -32601" error_is unknown -32601
	check "with its id" has unknown.id '"unknown"'
	check "exec with both command and argv: -32602" error_is both -32602
	check "readFile without path: -32602" error_is nopath -32602
	check "the message says which (path)" message_has nopath path
	check "writeFile with content and contentBase64: -32602" error_is twocontents -32602
	check "and nothing was written" test ! -e "$WS/two.txt"
	check "snapshot: -32000" error_is snapshot -32000
	check "saying not supported" message_has snapshot "not supported in this version"
	check "restore: -32000" error_is restore -32000
	check "a 17 MiB line: -32600" error_is big -32600
	check "\"request too large\"" message_has big "too large"
	check "and the next request is answered" like afterbig.result.version '".+"'
	check "no stray response before the notifications" has beforenotify.count 0
	check "notifications (info, an unknown method, exec) get no response" has notified.count 0
	check "the request after them is answered" like afternotify.result.version '".+"'
	check "an integer id comes back as that integer" lines intid.id=77 intid.result.exists=true
	check "no response nobody asked for" lacks "$OUT" "unexpected="
}

case_exec() {
	mkdir -p "$WS/sub/dir"
	chown -R "$CASE_UID:$CASE_UID" "$WS/sub"
	# (not JR_ENV=... rpc: that would export JR_ENV itself, value and all)
	JR_ENV="HOST_API_TOKEN=host-secret-value"
	rpc --policy strict <<'EOF'
call exit exec {"command":"echo out; echo err >&2; exit 3"}
call argv exec {"argv":["printf","%s|","a b","c"]}
call stdin exec {"command":"tr a-z A-Z","stdin":"hello jail"}
call cwd exec {"command":"pwd","cwd":"sub/dir"}
call env exec {"command":"echo foo=${FOO-unset} token=${MY_API_TOKEN-unset} host=${HOST_API_TOKEN-unset}","env":{"FOO":"bar","MY_API_TOKEN":"tok-secret-1234"}}
call envall exec {"argv":["env"],"env":{"FOO":"bar","MY_API_TOKEN":"tok-secret-1234"}}
call trunc exec {"command":"head -c 5000 /dev/zero | tr -c x x; echo done >&2","maxOutputBytes":100}
call trunc2 exec {"command":"echo out; head -c 5000 /dev/zero | tr -c y y >&2","maxOutputBytes":100}
call whole exec {"command":"head -c 5000 /dev/zero | tr -c x x","maxOutputBytes":5000}
call sig exec {"command":"kill -TERM $$"}
call nostdin exec {"command":"cat; echo cat-ended","timeoutMs":10000}
call afternostdin exec {"command":"echo next"}
call utf8 exec {"command":"printf '\\377ok'"}
call big exec {"command":"head -c 2000000 /dev/zero | tr -c z z"}
close
EOF
	JR_ENV=
	check "the script ran to its end, the server exited 0" ended 0
	check "exec: exit code 3 is a result" has exit.result.exitCode 3
	check "stdout" has exit.result.stdout '"out\n"'
	check "stderr" has exit.result.stderr '"err\n"'
	check "signal null, timedOut and truncated false" \
		lines exit.result.signal=null exit.result.timedOut=false exit.result.truncated=false
	check "durationMs a number" like exit.result.durationMs '[0-9]+(\.[0-9]+)?'
	check "argv: each word one argument" has argv.result.stdout '"a b|c|"'
	check "stdin reaches the command" has stdin.result.stdout '"HELLO JAIL"'
	check "cwd sub/dir: relative to the workspace" has cwd.result.stdout "\"$WS/sub/dir\\n\""
	check "env: FOO=bar is added, MY_API_TOKEN scrubbed, the server's HOST_API_TOKEN too" \
		has env.result.stdout '"foo=bar token=unset host=unset\n"'
	check "env: FOO=bar in the environment (env)" val_has envall.result.stdout 'FOO=bar\n'
	check "the token's value appears nowhere" lacks "$OUT" tok-secret-1234
	check "nor the server's" lacks "$OUT" host-secret-value
	check "maxOutputBytes 100: truncated true" has trunc.result.truncated true
	check "stdout is exactly 100 bytes" has trunc.result.stdout.len 100
	check "of the output" like trunc.result.stdout '"x{100}"'
	check "stderr whole, exit code 0" lines 'trunc.result.stderr="done\n"' trunc.result.exitCode=0
	check "maxOutputBytes is per stream: stderr cut at 100 bytes too" \
		lines trunc2.result.stderr.len=100 trunc2.result.truncated=true 'trunc2.result.stdout="out\n"'
	check "maxOutputBytes 5000 and 5000 bytes: whole, not truncated" \
		lines whole.result.stdout.len=5000 whole.result.truncated=false
	check "killed by SIGTERM: exitCode null, signal \"SIGTERM\"" \
		lines sig.result.exitCode=null 'sig.result.signal="SIGTERM"'
	check "without stdin the command reads EOF at once (not the server's stdin)" \
		lines 'nostdin.result.stdout="cat-ended\n"' nostdin.result.timedOut=false
	check "and the next request is not eaten" has afternostdin.result.stdout '"next\n"'
	check "invalid UTF-8 in the output becomes U+FFFD" has utf8.result.stdout '"\ufffdok"'
	check "the default maxOutputBytes: 1 MiB of 2 MB, truncated" \
		lines big.result.stdout.len=1048576 big.result.truncated=true big.result.exitCode=0
}

case_exec_timeout() {
	rpc_background --policy strict <<'EOF'
mark slow
send slow exec {"command":"sleep 1007 & sleep 1008; echo never","timeoutMs":3000}
sync running
wait slow
since slow
sync timedout
call alive exec {"command":"echo alive"}
close
EOF
	wait_sync running
	check "the timed exec's sleeps run" running "sleep 1007" "sleep 1008"
	release running
	wait_sync timedout
	check "timeoutMs: timedOut true" has slow.result.timedOut true
	check "signal \"SIGKILL\", exitCode null" lines 'slow.result.signal="SIGKILL"' slow.result.exitCode=null
	check "answered after the timeout, not after the sleep (< 10 s)" num slow.elapsedMs -lt 10000
	check "not before the timeout (>= 2.9 s)" num slow.elapsedMs -ge 2900
	check "what came after the sleep never ran" lacks "$OUT" never
	check "no process of it is left (sleep 1007 in the background, sleep 1008)" \
		all_gone "sleep 1007" "sleep 1008"
	release timedout
	rpc_wait
	check "the server keeps serving" has alive.result.stdout '"alive\n"'
	check "the script ran to its end, the server exited 0" ended 0
}

case_exec_concurrent() {
	rpc --policy strict <<'EOF'
mark pair
send s1 exec {"command":"sleep 1; echo one"}
send s2 exec {"command":"sleep 1; echo two"}
wait s1 s2
since pair
send slow exec {"command":"sleep 2; echo slow"}
send quick exec {"command":"echo quick"}
wait slow quick
send slow3 exec {"command":"sleep 2; echo slow3"}
send quickfile exists {"path":"."}
wait slow3 quickfile
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "both sleep 1 execs answered" lines 's1.result.stdout="one\n"' 's2.result.stdout="two\n"'
	check "together in < 1.9 s (they ran at once)" num pair.elapsedMs -lt 1900
	check "a quick echo sent after a sleep 2 is answered" has quick.result.stdout '"quick\n"'
	check "first (responses out of order, matched by id)" \
		test "$(val quick.order)" -lt "$(val slow.order)"
	check "while the sleep 2 one is still answered" has slow.result.stdout '"slow\n"'
	check "a file request is answered while an exec runs" has quickfile.result.exists true
	check "first" test "$(val quickfile.order)" -lt "$(val slow3.order)"
}

case_exec_cancel() {
	rpc_background --policy strict <<'EOF'
send c1 exec {"command":"(sleep 1013 >/dev/null 2>&1 &); sleep 1014; echo not-cancelled"}
sync running1
mark c1
call cancel1 cancel {"id":"c1"}
wait c1
since c1
sync cancelled1
send c2 exec {"command":"(sleep 1015 >/dev/null 2>&1 &); sleep 1016; echo not-cancelled"}
sync running2
notify $/cancelRequest {"id":"c2"}
wait c2
sync cancelled2
call alive exec {"command":"echo alive"}
close
EOF
	wait_sync running1
	check "the exec runs, with a double-forked background child" running "sleep 1013" "sleep 1014"
	release running1
	wait_sync cancelled1
	check "the cancel request succeeds" succeeded cancel1
	check "the cancelled exec gets error -32800" error_is c1 -32800
	check "\"cancelled\"" message_has c1 cancelled
	check "at once (< 5 s)" num c1.elapsedMs -lt 5000
	check "its whole tree is gone, the double-forked child too" all_gone "sleep 1013" "sleep 1014"
	release cancelled1
	wait_sync running2
	check "a second exec runs, with a double-forked child" running "sleep 1015" "sleep 1016"
	release running2
	wait_sync cancelled2
	check "\$/cancelRequest (a notification) cancels it: -32800" error_is c2 -32800
	check "its whole tree is gone, the double-forked child too" all_gone "sleep 1015" "sleep 1016"
	release cancelled2
	rpc_wait
	check "no \"not-cancelled\" output" lacks "$OUT" not-cancelled
	check "the server keeps serving" has alive.result.stdout '"alive\n"'
	check "the script ran to its end, the server exited 0" ended 0
	check "no response nobody asked for (the notification has none)" lacks "$OUT" "unexpected="
}

case_files() {
	printf 'b\n' | ws_file rd/beta.txt
	mkdir -p "$WS/rd/gamma"
	printf 'a\n' | ws_file rd/alpha
	ln -s alpha "$WS/rd/delta"
	for f in g/a.ts g/sub/b.ts g/sub/deep/c.ts g/d.js g/sub/e.tsx; do
		printf 'x\n' | ws_file "$f"
	done
	printf 'Hello world\nnothing here\nHELLO again\n' | ws_file gr/one.txt
	printf 'hello md\n' | ws_file gr/two.md
	printf 'hello nested\n' | ws_file gr/in/three.txt
	printf 'keep me\n' | ws_file rmme/sub/f.txt
	ln -s /etc/passwd "$WS/passwd-link"
	outdir=$(dirname "$WS")/outdir
	mkdir -p "$outdir"
	echo outside-victim-content >"$outdir/victim.txt"
	chown -R "$CASE_UID:$CASE_UID" "$outdir"
	ln -s "$outdir" "$WS/outlink"
	ln -s digits.txt "$WS/dlink"
	echo outside-content >"$(dirname "$WS")/outside.txt"
	chown -R "$CASE_UID:$CASE_UID" "$WS"
	B64=$(python3 -c 'import base64; print(base64.b64encode(bytes(range(256))).decode())')
	python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' >"$(dirname "$WS")/all.bin"
	rpc --policy strict <<EOF
call wtext writeFile {"path":"notes/a.txt","content":"h\u00e9llo\nline2\n","createDirs":true}
call rtext readFile {"path":"notes/a.txt"}
call rabs readFile {"path":"$WS/notes/a.txt"}
call nodirs writeFile {"path":"missing/x.txt","content":"x"}
call wbin writeFile {"path":"bin/all.bin","contentBase64":"$B64","createDirs":true}
call rbin readFile {"path":"bin/all.bin","encoding":"base64"}
call wdigits writeFile {"path":"digits.txt","content":"0123456789"}
call rmax readFile {"path":"digits.txt","maxBytes":4}
call rall readFile {"path":"digits.txt"}
call stat stat {"path":"digits.txt"}
call statdir stat {"path":"notes"}
call statlink stat {"path":"dlink"}
call readdir readdir {"path":"rd"}
call yes exists {"path":"notes/a.txt"}
call no exists {"path":"notes/nothing.txt"}
call mkdirflat mkdir {"path":"mk2/a/b"}
call mkdirrec mkdir {"path":"mk/a/b/c","recursive":true}
call rmnonrec rm {"path":"rmme"}
call rmnonrecstays exists {"path":"rmme/sub/f.txt"}
call rmrec rm {"path":"rmme","recursive":true}
call rmmissing rm {"path":"rmme"}
call rmforce rm {"path":"rmme","force":true}
call glob glob {"pattern":"**/*.ts","cwd":"g"}
call globtop glob {"pattern":"g/*.ts"}
call grepi grep {"pattern":"hel+o","path":"gr","include":"*.txt","ignoreCase":true}
call grepcase grep {"pattern":"hel+o","path":"gr","include":"*.txt"}
call grepmax grep {"pattern":"l","path":"gr","maxResults":2}
call grepere grep {"pattern":"wor(l|x)d$","path":"gr"}
call enoent readFile {"path":"notes/missing.txt"}
call symlinkout readFile {"path":"passwd-link"}
call dotdot readFile {"path":"../outside.txt"}
call dotdotw writeFile {"path":"../escape.txt","content":"escaped"}
call linkr readFile {"path":"outlink/victim.txt"}
call linkw writeFile {"path":"outlink/pwned.txt","content":"pwned"}
call linkmk mkdir {"path":"outlink/newdir","recursive":true}
call linkrm rm {"path":"outlink/victim.txt","force":true}
call linkls readdir {"path":"outlink"}
call linkgrep grep {"pattern":"victim","path":"outlink"}
call grepall grep {"pattern":"victim-content"}
call globall glob {"pattern":"**/*.txt"}
call isdir readFile {"path":"notes"}
call mkdirtwice mkdir {"path":"mk/a","recursive":true}
call etc writeFile {"path":"/etc/jailrun-serve-x","content":"x"}
call suid writeFile {"path":"suid.sh","content":"#!/bin/sh\n","mode":2541}
call sgid writeFile {"path":"sgid.sh","content":"#!/bin/sh\n","mode":1517}
call exe writeFile {"path":"run.sh","content":"#!/bin/sh\necho ran\n","mode":493}
call runit exec {"command":"./run.sh"}
call key readFile {"path":"$FIXHOME/.ssh/id_rsa"}
call keyb64 readFile {"path":"$FIXHOME/.ssh/id_rsa","encoding":"base64"}
call keycat exec {"command":"cat $FIXHOME/.ssh/id_rsa"}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "writeFile: bytesWritten counts UTF-8 bytes" has wtext.result.bytesWritten 13
	check "the file reaches the host, UTF-8" \
		test "$(cat "$WS/notes/a.txt" 2>/dev/null)" = "$(printf 'h\303\251llo\nline2')"
	check "owned by the caller" test "$(stat -c %u "$WS/notes/a.txt" 2>/dev/null)" = "$CASE_UID"
	check "a new file's mode defaults to 0644" test "$(stat -c %a "$WS/notes/a.txt" 2>/dev/null)" = 644
	check "readFile reads it back" has rtext.result.content '"h\u00e9llo\nline2\n"'
	check "size 13, not truncated" lines rtext.result.size=13 rtext.result.truncated=false
	check "an absolute path in the workspace reads the same" has rabs.result.content '"h\u00e9llo\nline2\n"'
	check "writeFile without createDirs into a missing directory: -32001" error_is nodirs -32001
	check "base64: all 256 byte values written" cmp -s "$WS/bin/all.bin" "$(dirname "$WS")/all.bin"
	check "bytesWritten 256" has wbin.result.bytesWritten 256
	check "and read back as the same base64" has rbin.result.contentBase64 "\"$B64\""
	check "(no content member for base64)" test -z "$(val rbin.result.content)"
	check "readFile maxBytes 4: the first 4 bytes" has rmax.result.content '"0123"'
	check "truncated true, size the file's 10" lines rmax.result.truncated=true rmax.result.size=10
	check "without maxBytes: whole" lines 'rall.result.content="0123456789"' rall.result.truncated=false
	check "stat: size 10, a file" lines stat.result.size=10 stat.result.isFile=true \
		stat.result.isDirectory=false stat.result.isSymlink=false
	m=$(val stat.result.mode)
	check "stat: mode's permission bits are the host's" \
		test "$(printf '%o' "$((${m:-0} & 4095))")" = "$(stat -c %a "$WS/digits.txt")"
	mt=$(val stat.result.mtimeMs | cut -d. -f1)
	host_mt=$(($(stat -c %Y "$WS/digits.txt") * 1000))
	check "stat: mtimeMs is the host's mtime (within 2 s)" \
		test "${mt:-0}" -ge $((host_mt - 2000)) -a "${mt:-0}" -le $((host_mt + 2000))
	check "stat of a directory" lines statdir.result.isDirectory=true statdir.result.isFile=false
	check "stat of a symlink: isSymlink (lstat)" has statlink.result.isSymlink true
	check "readdir: 4 entries" has readdir.result.entries.len 4
	check "sorted by name" lines 'readdir.result.entries.0.name="alpha"' 'readdir.result.entries.1.name="beta.txt"' \
		'readdir.result.entries.2.name="delta"' 'readdir.result.entries.3.name="gamma"'
	check "with their types" lines readdir.result.entries.0.isFile=true readdir.result.entries.3.isDirectory=true \
		readdir.result.entries.2.isSymlink=true readdir.result.entries.3.isFile=false
	check "exists: true" has yes.result.exists true
	check "exists: false" has no.result.exists false
	check "mkdir without recursive of a deep path: -32001 ENOENT" \
		lines mkdirflat.error.code=-32001 'mkdirflat.error.data.errno="ENOENT"'
	check "mkdir recursive makes every level" test -d "$WS/mk/a/b/c"
	check "mkdir recursive: {}" has mkdirrec.result '{}'
	check "rm of a non-empty directory without recursive: -32001" error_is rmnonrec -32001
	check "which stays" has rmnonrecstays.result.exists true
	check "rm recursive removes the tree" lines rmrec.result='{}'
	check "from the host" test ! -e "$WS/rmme"
	check "rm of a missing path: -32001 ENOENT" lines rmmissing.error.code=-32001 'rmmissing.error.data.errno="ENOENT"'
	check "rm force of a missing path: {}" has rmforce.result '{}'
	check "glob **/*.ts in g: every depth, sorted, relative to cwd" \
		has glob.result.paths '["a.ts", "sub/b.ts", "sub/deep/c.ts"]'
	check "glob g/*.ts: one level" has globtop.result.paths '["g/a.ts"]'
	check "grep ignoreCase with include *.txt: 3 matches" has grepi.result.matches.len 3
	check "lines 1 and 3 of one.txt and 1 of in/three.txt (recursive), 1-based, with their text" \
		pyq grepi.result.matches 'sorted((m["path"].split("/")[-1], m["line"], m["text"]) for m in v) ==
			[("one.txt", 1, "Hello world"), ("one.txt", 3, "HELLO again"), ("three.txt", 1, "hello nested")]'
	check "the match paths name the files" \
		pyq grepi.result.matches 'sorted(m["path"] for m in v) in (["in/three.txt", "one.txt", "one.txt"],
			["gr/in/three.txt", "gr/one.txt", "gr/one.txt"])'
	check "not the .md file (include)" pyq grepi.result.matches 'not any(m["path"].endswith(".md") for m in v)'
	check "not truncated" has grepi.result.truncated false
	check "grep without ignoreCase: only the lower-case line" lines grepcase.result.matches.len=1 \
		'grepcase.result.matches.0.text="hello nested"'
	check "grep maxResults 2: 2 matches, truncated" lines grepmax.result.matches.len=2 grepmax.result.truncated=true
	check "grep is extended regex" lines grepere.result.matches.len=1 'grepere.result.matches.0.text="Hello world"'
	check "a missing file: -32001" error_is enoent -32001
	check "the message names the path and the reason" \
		has enoent.error.message '"readFile notes/missing.txt: No such file or directory"'
	check "data.errno ENOENT" has enoent.error.data.errno '"ENOENT"'
	check "a symlink to /etc/passwd: an error" like symlinkout.error.code '-3[0-9]+'
	check "\"out of the workspace\"" message_has symlinkout "out of the workspace"
	check "/etc/passwd's content is not in the output" lacks "$OUT" "root:x:0:0"
	check "readFile ../outside.txt: refused" like dotdot.error.code '-3[0-9]+'
	check "its content is not in the output" lacks "$OUT" outside-content
	check "writeFile ../escape.txt: refused" like dotdotw.error.code '-3[0-9]+'
	check "and not written on the host" test ! -e "$(dirname "$WS")/escape.txt"
	check "readFile through a symlinked directory out of the workspace: refused" like linkr.error.code '-3[0-9]+'
	check "writeFile through it: refused" like linkw.error.code '-3[0-9]+'
	check "and nothing written outside" test ! -e "$outdir/pwned.txt"
	check "mkdir through it: refused" like linkmk.error.code '-3[0-9]+'
	check "and no directory made outside" test ! -e "$outdir/newdir"
	check "rm (force) through it: refused" like linkrm.error.code '-3[0-9]+'
	check "and the file outside is still there" test -f "$outdir/victim.txt"
	check "readdir of it: refused" like linkls.error.code '-3[0-9]+'
	check "grep of it: refused" like linkgrep.error.code '-3[0-9]+'
	check "grep of the workspace does not follow it" has grepall.result.matches '[]'
	check "the outside file's content is nowhere in the output" lacks "$OUT" outside-victim-content
	check "glob **/*.txt does not list files behind it" \
		pyq globall.result.paths '"notes/a.txt" in v and not any(p.startswith("outlink/") for p in v)'
	check "readFile of a directory: -32001 EISDIR" lines isdir.error.code=-32001 'isdir.error.data.errno="EISDIR"'
	check "mkdir recursive of an existing directory: {}" has mkdirtwice.result '{}'
	check "writeFile /etc/x: -32001" error_is etc -32001
	check "EROFS or EACCES" one_of etc.error.data.errno '"EROFS"' '"EACCES"'
	check "and /etc untouched" test ! -e /etc/jailrun-serve-x
	check "writeFile mode 04755 makes no setuid file" test ! -u "$WS/suid.sh"
	check "writeFile mode 02755 makes no setgid file" test ! -g "$WS/sgid.sh"
	check "writeFile mode 0755: an executable file" test "$(stat -c %a "$WS/run.sh" 2>/dev/null)" = 755
	check "that runs" has runit.result.stdout '"ran\n"'
	check "the masked ~/.ssh/id_rsa cannot be read (readFile)" like key.error.code '-3[0-9]+'
	check "(readFile, base64)" like keyb64.error.code '-3[0-9]+'
	check "(exec cat)" like keycat.result.exitCode '[1-9][0-9]*'
	check "the fixture secret is nowhere in the output" lacks "$OUT" jailrun-test-secret
	check "(nor its base64)" lacks "$OUT" "$(head -c 24 "$FIXHOME/.ssh/id_rsa" | base64)"
	check "nor on stderr" lacks "$ERR" jailrun-test-secret
}

# The default policy shows the home read-only, ~/.ssh masked: the fixture
# key cannot be read through serve either.
case_masked_home() {
	rpc <<EOF
call info info
call ls readdir {"path":"$FIXHOME/.ssh"}
call key readFile {"path":"$FIXHOME/.ssh/id_rsa"}
call keyb64 readFile {"path":"$FIXHOME/.ssh/id_rsa","encoding":"base64"}
call keycat exec {"command":"cat ~/.ssh/id_rsa"}
call keyw writeFile {"path":"$FIXHOME/.ssh/id_rsa","content":"replaced"}
call grep grep {"pattern":"secret","path":"$FIXHOME"}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "the default policy" has info.result.policy.name '"default"'
	# shellcheck disable=SC2088 # a description
	check "~/.ssh is shown empty" has ls.result.entries '[]'
	check "readFile ~/.ssh/id_rsa: an error" like key.error.code '-3[0-9]+'
	check "(base64 too)" like keyb64.error.code '-3[0-9]+'
	check "exec cat ~/.ssh/id_rsa fails" like keycat.result.exitCode '[1-9][0-9]*'
	check "writeFile over it fails" like keyw.error.code '-3[0-9]+'
	check "and the host's key is untouched" grep -q jailrun-test-secret "$FIXHOME/.ssh/id_rsa"
	check "grep of the home finds nothing" has grep.result.matches '[]'
	check "the fixture secret is nowhere in the output" lacks "$OUT" jailrun-test-secret
	check "(nor its base64)" lacks "$OUT" "$(head -c 24 "$FIXHOME/.ssh/id_rsa" | base64)"
	check "nor on stderr" lacks "$ERR" jailrun-test-secret
}

case_persistence() {
	tmpname=jailrun-serve-persist-$$-$JR_MODE
	rpc_background --policy strict <<EOF
call bg exec {"command":"sleep 1011 >/dev/null 2>&1 & echo started"}
call tmpw exec {"command":"echo kept > /tmp/$tmpname"}
sync bg
call ps exec {"command":"ps -eo args"}
call tmpr exec {"command":"cat /tmp/$tmpname"}
call tmpfile readFile {"path":"/tmp/$tmpname"}
close
EOF
	wait_sync bg
	check "exec of a background sleep returns" has bg.result.stdout '"started\n"'
	check "and the sleep keeps running" running "sleep 1011"
	check "the jail's /tmp is not the host's" test ! -e "/tmp/$tmpname"
	release bg
	rpc_wait
	check "a later exec sees it (ps)" val_has ps.result.stdout 'sleep 1011'
	check "a file in the jail's /tmp persists to the next exec" has tmpr.result.stdout '"kept\n"'
	check "readFile of an absolute path sees the jail's /tmp" has tmpfile.result.content '"kept\n"'
	check "the script ran to its end, the server exited 0" ended 0
	check "after the server exits, the background sleep is gone" all_gone "sleep 1011"
}

case_session() {
	rpc_background --policy strict <<'EOF'
call info info
pid
call bg exec {"command":"sleep 1021 >/dev/null 2>&1 & echo started"}
sync running
close
EOF
	wait_sync running
	name=$(sval info.result.session)
	check "the private session has a name" test -n "$name"
	check "the private session is listed while serve runs" session_listed "$name"
	check "with this workspace" session_here
	check "its background sleep runs" running "sleep 1021"
	release running
	rpc_wait
	check "serve exits 0 on stdin EOF" ended 0
	check "then no process of it is left" all_gone "sleep 1021"
	check "and no session is listed" session_gone_within_5s "$name"
	check "none serves this workspace" no_session_here

	rpc_background --policy strict <<'EOF'
call info info
pid
call bg exec {"command":"sleep 1022 >/dev/null 2>&1 & echo started"}
sync running
signal KILL
close
EOF
	wait_sync running
	name=$(sval info.result.session)
	check "a second private session, another name" test -n "$name"
	check "listed" session_listed "$name"
	check "with this workspace" session_here
	check "its background sleep runs" running "sleep 1022"
	release running
	rpc_wait
	check "serve died of SIGKILL" ended -9
	check "within 5 s no process of it is left" all_gone "sleep 1022"
	check "and no session is listed" session_gone_within_5s "$name"
	check "none serves this workspace" no_session_here

	rpc_background --policy strict <<'EOF'
call info info
call bg exec {"command":"sleep 1023 >/dev/null 2>&1 & echo started"}
sync running
call shutdown shutdown {}
exited
EOF
	wait_sync running
	name=$(sval info.result.session)
	check "a third private session" session_listed "$name"
	check "its background sleep runs" running "sleep 1023"
	release running
	rpc_wait
	check "shutdown: {}" has shutdown.result '{}'
	check "then serve exits 0 by itself, stdin still open" has exited 0
	check "no process of it is left" all_gone "sleep 1023"
	check "and no session is listed" session_gone_within_5s "$name"
}

case_guard() {
	printf 'original\n' | ws_file existing.txt
	printf 'other\n' | ws_file other.txt
	rpc --policy strict -D 'guard read-before-write' <<'EOF'
call w1 writeFile {"path":"existing.txt","content":"overwritten\n"}
call cat1 exec {"command":"cat existing.txt"}
call r1 readFile {"path":"existing.txt"}
call w2 writeFile {"path":"existing.txt","content":"after-read\n"}
call w3 writeFile {"path":"brand-new.txt","content":"new\n"}
call r2 readFile {"path":"other.txt","encoding":"base64"}
call w4 writeFile {"path":"other.txt","content":"other-after-read\n"}
close
EOF
	check "the script ran to its end, the server exited 0" ended 0
	check "writeFile over an existing file not read: -32002" error_is w1 -32002
	check "the message names the path and the guard" has w1.error.message \
		'"writeFile existing.txt: refused: the file was not read first (guard read-before-write)"'
	check "the file is unchanged" has cat1.result.stdout '"original\n"'
	check "after readFile of it: allowed" succeeded w2
	check "and written" test "$(cat "$WS/existing.txt")" = after-read
	check "a new file: allowed" succeeded w3
	check "and written" test "$(cat "$WS/brand-new.txt" 2>/dev/null)" = new
	check "a base64 readFile counts as reading it too" succeeded w4
}

# SERVE_CASES="case_x case_y": only those (while debugging a case).
# shellcheck disable=SC2086
run_cases ${SERVE_CASES:-case_protocol case_exec case_exec_timeout case_exec_concurrent case_exec_cancel \
	case_files case_masked_home case_persistence case_session case_guard}
