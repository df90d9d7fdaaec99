#!/bin/sh
# The command provider (jailrun-provider(7), COMMAND PROVIDER): every
# operation is one run of a program named by program=, which gets a
# request JSON and answers with a result JSON.  The program here is
# tests/integration/provider-test.py, which runs things on the host and
# logs its requests; contrib/providers/ssh-provider is tried too, with a
# stand-in for ssh that runs the remote command locally.
. "$JR_SRCDIR/tests/integration/lib.sh"

BUILD=$(dirname "$JAILRUN")
PROV=$JR_TOP/providers
BIN=$JR_TOP/bin
mkdir -p "$PROV" "$BIN"
cp "$BUILD/.libs/command.so" "$PROV/command.so"
cp "$BUILD/tests/helpers/provider-driver" "$JR_SRCDIR/tests/integration/provider-test.py" \
	"$JR_SRCDIR/tests/integration/fake-ssh" "$JR_SRCDIR/contrib/providers/ssh-provider" "$BIN/"
chmod -R a+rX "$PROV" "$BIN"
T=$BIN/provider-test.py
JAILRUN_PROVIDER_PATH=$PROV
export JAILRUN_PROVIDER_PATH
SSHP=$BIN/ssh-provider
# A policy of only what the ssh example enforces (env, limits).
printf 'env clear\nenv set FOO=bar PATH=/usr/bin:/bin\nlimit nofile 64\n' >"$JR_TOP/remote.pol"
chmod a+r "$JR_TOP/remote.pol"

# jailrun --provider command with the test program; JR_EXTRA_ENV adds to
# the caller's environment.  (Plain assignments: a prefix assignment to a
# function call would export them, into the environment under test.)
jrc() {
	JR_ENV=${JR_EXTRA_ENV:-}
	jr --provider command --provider-opt "program=$T" "$@"
	JR_ENV=
}

# The last request of an operation in the log, as JSON.
request_of() {
	python3 -c '
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
print(json.dumps([r for r in reqs if r["operation"] == sys.argv[2]][-1]))
' "$1" "$2"
}

case_output_and_status() {
	jrc -- sh -c 'echo out; echo err >&2; exit 3'
	check_rc 3 "the command's exit status comes back"
	check "its stdout, streamed on descriptor 3" contains "$OUT" out
	check "its stderr, on descriptor 4" contains "$ERR" err
	jrc -- sh -c 'exit 0'
	check_rc 0 "exit status 0 too"
	jrc -- sh -c 'kill -TERM $$'
	check_rc 143 "a command killed by a signal: 128 + N"
	for mode in text base64; do
		jrc --provider-opt output=$mode -- sh -c 'echo out-'$mode'; echo err-'$mode' >&2; exit 4'
		check_rc 4 "output=$mode: the status"
		check "output=$mode: stdout from the result's field" contains "$OUT" out-$mode
		check "output=$mode: stderr too" contains "$ERR" err-$mode
	done
	jrc --provider-opt result=file -- sh -c 'echo via-file; exit 5'
	check_rc 5 "a result in JAILRUN_RESULT_PATH works as well as stdout"
	check "(its output too)" contains "$OUT" via-file
	printf 'line one\nline two\n' >"$WS/input"
	jr_stdin "$WS/input" --provider command --provider-opt "program=$T" -- cat
	check "exec hands the command's stdin to the program" contains "$OUT" "line two"
}

case_request() {
	log=$(dirname "$WS")/log
	JR_EXTRA_ENV="GITHUB_TOKEN=tok-cmd-4711 SAFE_VAR=visible"
	jrc --provider-opt "log=$log" --provider-opt api_token=cfg-secret-0815 \
		--timeout 30 --set 'limit nofile 64' -- sh -c 'ulimit -n; pwd'
	JR_EXTRA_ENV=
	check_rc 0 "a run with a logged request"
	request_of "$log" exec >"$WS/exec.json"
	request_of "$log" open >"$WS/open.json"
	check "the request has argv, cwd, limits, the time and the network" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["protocol"] == 1 and r["_protocol"] == "1", r
assert r["argv"] == ["sh", "-c", "ulimit -n; pwd"], r["argv"]
assert r["cwd"] == sys.argv[2] and r["workspace"] == sys.argv[2], r["cwd"]
assert r["limits"]["nofile"] == 64 and r["timeoutMs"] == 30000, (r["limits"], r["timeoutMs"])
assert r["network"]["mode"] == "proxy" and r["maxOutputBytes"] is None, r["network"]
assert r["id"] == "test-instance" and r["stdoutFd"] == 3 and r["stderrFd"] == 4
' "$WS/exec.json" "$WS"
	check "the environment is the scrubbed one: a caller's *_TOKEN is absent" python3 -c '
import json, sys
env = json.load(open(sys.argv[1]))["env"]
assert "GITHUB_TOKEN" not in env and env.get("SAFE_VAR") == "visible", sorted(env)
' "$WS/exec.json"
	check "open gets the policy, the config without secret keys, the workspace" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["policy"]["version"] == 1 and r["policy"]["clauses"], r["policy"].keys()
assert r["config"]["program"] and "api_token" not in r["config"], r["config"]
assert "JAILRUN_CONFIG_API_TOKEN" in r["_configEnv"], r["_configEnv"]
assert r["workspace"] == sys.argv[2] and r["preserve"] is False
' "$WS/open.json" "$WS"
	check "no request file held the secret configuration value" lacks "$log" cfg-secret-0815
	check "nor the caller's token" lacks "$log" tok-cmd-4711
	check "the program enforced nofile (it says so, and does)" grep -qx 64 "$OUT"
	check "and the command ran in the workspace" grep -qx "$WS" "$OUT"
}

case_unenforced_clause() {
	jrc --provider-opt enforce=skip:seccomp -- touch "$WS/ran"
	check_rc 125 "a semantic clause left unenforced: exit 125"
	check "naming the clause" contains "$ERR" "'seccomp deny"
	check "and the program's reason" contains "$ERR" "provider-test.py skips it"
	check "the command did not run" test ! -e "$WS/ran"
	jrc --provider-opt answer=directives --provider-opt enforce=skip:env -- touch "$WS/ran"
	check_rc 125 "the same through the \"directives\" shorthand"
	check "naming an env clause" contains "$ERR" "'env "
	check "the command did not run" test ! -e "$WS/ran"
	jrc --provider-opt answer=directives -- touch "$WS/ran"
	check_rc 0 "every directive claimed: it runs"
	check "(and did)" test -e "$WS/ran"
	jrc --provider-opt enforce=none -- true
	check_rc 125 "an answer claiming nothing: 125"
}

case_failure_redacted() {
	secret=cfg-secret-0815
	jrc --provider-opt api_token=$secret --provider-opt fail=exec -- true
	check_rc 125 "a failing program: exit 125"
	check "the error quotes its stdout and stderr" sh -c "grep -q 'exit status 3' '$ERR' && grep -q 'boom on stdout' '$ERR' && grep -q 'boom on stderr' '$ERR'"
	check "with the secret configuration value redacted" contains "$ERR" "token ***"
	check "which appears nowhere" lacks "$ERR" $secret
	jrc -v --provider-opt My-Password=$secret --provider-opt fail=open -- true
	check_rc 125 "open failing: 125"
	check "its stderr is logged with -v, redacted" contains "$ERR" "jailrun: command: provider-test.py: boom on stderr"
	check "a key named *password* (any case) is secret too" lacks "$ERR" $secret
	jrc --provider-opt error=exec -- true
	check_rc 125 "an answer with an error: 125"
	check "its message" contains "$ERR" "no such thing here"
	jrc --provider-opt garbage=exec -- true
	check_rc 125 "an answer that is not JSON: 125"
	check "saying so" contains "$ERR" "is not one JSON object"
	jrc -- true
	check_rc 0 "(the same program without failures works)"
}

case_config_errors() {
	jr --provider command -- true
	check_rc 125 "no program=: 125"
	check "saying what is missing" contains "$ERR" "no program configured"
	jr --provider command --provider-opt program=/nonexistent/p -- true
	check_rc 125 "a program that does not exist: 125"
	check "naming it" contains "$ERR" "cannot run /nonexistent/p"
	jrc --provider-opt timeout=soon -- true
	check_rc 125 "timeout= not a number: 125"
}

case_timeouts() {
	start=$(date +%s)
	jrc --provider-opt hang=open --provider-opt timeout=1 -- true
	check_rc 125 "a program that does not answer within timeout=: 125"
	check "saying so" contains "$ERR" "no answer within 1 s"
	check "after about a second" test $(($(date +%s) - start)) -lt 10
	start=$(date +%s)
	jrc --timeout 1 -- sleep 30
	check_rc 124 "the command's time limit, enforced by the program: 124"
	check "soon" test $(($(date +%s) - start)) -lt 10
	start=$(date +%s)
	jrc --timeout 1 --provider-opt ignore_timeout=1 --provider-opt grace=1 -- sleep 30
	check_rc 124 "a program that overstays the limit by grace= is killed: 124"
	check "soon" test $(($(date +%s) - start)) -lt 10
}

case_interrupt() {
	jr_background --provider command --provider-opt "program=$T" -- sleep 987
	i=0
	while [ $i -lt 100 ] && [ -z "$(pids_with 'sleep 987')" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -INT "$JR_PID"
	wait "$JR_PID"
	RC=$?
	check_rc 130 "SIGINT to jailrun ends the program (SIGTERM): 130"
	check "and the command with it (the program's doing)" gone_within_5s "sleep 987"
}

case_output_limit() {
	jrc --output-limit 10 -- sh -c 'echo 0123456789abcdef; echo more >&2'
	check "output past --output-limit is dropped" lacks "$OUT" abcdef
	check "(up to it passes)" contains "$OUT" 0123456789
	check "stderr counts against the same limit" lacks "$ERR" more
}

case_gc() {
	log=$(dirname "$WS")/log
	jr --provider command --provider-opt "program=$T" --provider-opt "log=$log" --gc
	check_rc 0 "--gc runs the program's gc"
	check "(it got a gc request)" contains "$log" '"operation": "gc"'
}

driver() {
	as_user "$BIN/provider-driver" "$PROV/command.so" "$WS" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

file_ops_checks() {
	what=$1
	check_rc 0 "$what: open and close"
	check "$what: write_file, read_file" grep -qx 'read: 5 \[hello\]' "$OUT"
	check "$what: read_file past its maximum: EFBIG" grep -q '^error: EFBIG' "$OUT"
	check "$what: stat" grep -qx 'stat: f 5 640' "$OUT"
	check "$what: mkdir an existing directory: EEXIST" grep -q '^error: EEXIST' "$OUT"
	check "$what: readdir" grep -qx 'readdir: d f' "$OUT"
	check "$what: exists" sh -c "grep -qx 'exists: yes' '$OUT' && grep -qx 'exists: no' '$OUT'"
	check "$what: stat of nothing: ENOENT" grep -q '^error: ENOENT' "$OUT"
	check "$what: rm of a full directory: ENOTEMPTY, recursive works" sh -c \
		"grep -q '^error: ENOTEMPTY' '$OUT' && grep -qx 'readdir: f' '$OUT'"
}

file_ops="write f hello , read f , read f 3 , stat f , mkdir d , mkdir d , mkdir d/e/f parents ,
	readdir . , exists f , exists nope , stat nope , rm d , rm d recursive , readdir ."

case_file_operations() {
	# shellcheck disable=SC2086 # the operations are words
	driver "program=$T" -- $file_ops
	file_ops_checks "test program"
	check "the files are in the workspace" test -f "$WS/f"
}

case_ssh_example() {
	remote=$(dirname "$WS")/remote
	sshlog=$(dirname "$WS")/ssh.log
	ssh_opts="--provider-opt program=$SSHP --provider-opt host=builder@example.invalid
		--provider-opt workdir=$remote --provider-opt ssh=$BIN/fake-ssh"
	JR_ENV="FAKE_SSH_LOG=$sshlog CALLER_ONLY=1"
	# shellcheck disable=SC2086 # the options are words
	jr --policy "$JR_TOP/remote.pol" --provider command $ssh_opts \
		-- sh -c 'pwd; echo "FOO=$FOO CALLER_ONLY=${CALLER_ONLY:-unset}"; ulimit -n; echo e >&2; exit 6'
	check_rc 6 "ssh-provider: the status of the remote command"
	check "it ran in workdir" grep -qx "$remote" "$OUT"
	check "with exactly the policy's environment (env -i)" grep -qx "FOO=bar CALLER_ONLY=unset" "$OUT"
	check "under its nofile limit (ulimit -n)" grep -qx 64 "$OUT"
	check "stderr comes back" grep -qx e "$ERR"
	check "it went to host=" grep -qx builder@example.invalid "$sshlog"
	JR_ENV=
	# shellcheck disable=SC2086
	jr --provider command $ssh_opts -- true
	check_rc 125 "ssh-provider refuses the default policy: it enforces no filesystem view"
	check "saying so" contains "$ERR" "ssh-provider runs commands on builder@example.invalid as they are"
	# shellcheck disable=SC2086
	driver "program=$SSHP" host=h "workdir=$remote" "ssh=$BIN/fake-ssh" -- $file_ops
	file_ops_checks "ssh-provider"
	check "ssh-provider: the files are in workdir" test -f "$remote/f"
}

run_cases case_output_and_status case_request case_unenforced_clause case_failure_redacted \
	case_config_errors case_timeouts case_interrupt case_output_limit case_gc case_file_operations \
	case_ssh_example
