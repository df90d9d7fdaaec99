#!/bin/sh
# The run report (--report FILE|-): every report is validated against
# man/jailrun-report.schema.json and its fields are checked against what
# the run did (report-check.py: PATH OP LITERAL assertions).
. "$JR_SRCDIR/tests/integration/lib.sh"

if ! python3 -c 'import jsonschema' 2>/dev/null; then
	echo "Bail out! the python3 jsonschema module is missing (apt-get install python3-jsonschema)"
	exit 1
fi
SCHEMA=$JR_TOP/jailrun-report.schema.json
CHECKER=$JR_TOP/report-check.py
cp "$JR_SRCDIR/man/jailrun-report.schema.json" "$SCHEMA"
cp "$JR_SRCDIR/tests/integration/report-check.py" "$CHECKER"
chmod 644 "$SCHEMA" "$CHECKER"

VERSION=$("$JR_BIN" --version | sed -n 's/^jailrun //p')
# The kernel's Landlock ABI, empty without Landlock.
LANDLOCK_ABI=$("$JR_BIN" --doctor 2>/dev/null | sed -n 's/^Landlock *ok: ABI \([0-9]*\).*/\1/p')

# One TAP point: $REPORT is a valid report and every ASSERTION holds.
report_is() {
	desc=$1
	shift
	check "$desc" python3 "$CHECKER" "$SCHEMA" "$REPORT" "$@"
}

# The same for the report jailrun wrote to its stderr ($ERR), after the
# command's own output.
stderr_report_is() {
	desc=$1
	shift
	check "$desc" python3 "$CHECKER" --stderr "$SCHEMA" "$ERR" "$@"
}

# Prints the value at PATH of a valid report (default $REPORT).
report_get() {
	python3 "$CHECKER" --get "$1" "$SCHEMA" "${2:-$REPORT}"
}

# The policy.sha256 of a valid report FILE, or nothing.
sha_of() { report_get policy.sha256 "$1" 2>/dev/null | grep -E '^[0-9a-f]{64}$'; }
# Both non-empty, and the same / different.
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
differ() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]; }

# A file in the workspace that the case's user owns.
ws_file() {
	cat >"$WS/$1"
	chmod 644 "$WS/$1"
	chown "$CASE_UID" "$WS/$1"
}

# Lines of $OUT equal to TEXT.
lines_of() { grep -cxF -- "$1" "$OUT"; }

case_success() {
	REPORT=$WS/report.json
	before=$(date +%s%3N)
	jr --policy strict --report "$REPORT" -- echo 'a b' c
	after=$(date +%s%3N)
	check_rc 0 "a run with --report keeps the command's status"
	check "and its output, alone on stdout" test "$(cat "$OUT")" = "a b c"
	check "the report file is created with mode 0600" test "$(stat -c %a "$REPORT" 2>/dev/null)" = 600
	report_is "the report is valid and says the command exited 0" \
		'reportVersion==1' 'status==0' 'exitCode==0' 'signal==null' 'signalName==null' \
		'timedOut==false' 'oomKilled==false' 'execError==null' 'error==null'
	report_is "it names jailrun's version and echoes argv" \
		"version==\"$VERSION\"" 'argv==["echo","a b","c"]'
	report_is "startedAt and wallMs fall within the run" \
		"epochms(startedAt)>=$((before - 5))" "epochms(startedAt)<=$after" \
		'wallMs>0' "wallMs<=$((after - before))"
	report_is "the policy: its name, the files loaded in load order, a sha256" \
		'policy.name=="strict"' \
		"policy.files==[\"$JR_TOP/policy/strict.pol\",\"$JR_TOP/policy/base.pol\",\"$JR_TOP/policy/secrets.pol\"]" \
		'policy.sha256=~"^[0-9a-f]{64}$"'
	report_is "isolation by all seven namespaces, no network" \
		'enforcement.isolation=="namespaces"' 'enforcement.network=="none"' \
		'enforcement.namespaces has "user"' 'enforcement.namespaces has "mount"' \
		'enforcement.namespaces has "pid"' 'enforcement.namespaces has "net"' \
		'enforcement.namespaces has "ipc"' 'enforcement.namespaces has "uts"' \
		'enforcement.namespaces has "cgroup"'
	report_is "the strict seccomp filter, its denials counted" \
		'type(enforcement.seccomp)=="object"' 'enforcement.seccomp.defaultAction=="allow"' \
		'enforcement.seccomp.defaultErrno==null' 'enforcement.seccomp.rules>0' \
		'enforcement.seccomp.denialsCounted==true' 'denials.network==[]'
	if [ "$JR_MODE" = root ]; then
		report_is "root's jail has jailrun's own rules too (the setuid guard)" \
			'enforcement.seccomp.builtinRules>0'
	fi
	if [ -n "$LANDLOCK_ABI" ]; then
		report_is "Landlock in force, at most the kernel's ABI ($LANDLOCK_ABI)" \
			'type(enforcement.landlock)=="object"' 'enforcement.landlock.abi>=1' \
			"enforcement.landlock.abi<=$LANDLOCK_ABI" 'enforcement.landlock.rules>0' \
			'enforcement.landlock.handledAccessFs has "execute"' \
			'enforcement.landlock.handledAccessFs has "write_file"'
	else
		report_is "no Landlock on this kernel" 'enforcement.landlock==null'
	fi
	report_is "every clause enforced, no limits asked for" \
		'enforcement.clauses.notEnforced==0' 'enforcement.clauses.enforced>0' \
		'enforcement.limits.timeMs==null' 'enforcement.limits.killAfterMs==2000' \
		'enforcement.limits.memoryBytes==null' 'enforcement.limits.pids==null' \
		'enforcement.limits.cpus==null' 'enforcement.limits.outputBytes==null'
	report_is "output not relayed (no limit, no pty): outputBytes null; no memory cgroup" \
		'outputBytes==null' 'truncated==false' 'memoryPeakBytes==null'

	jr --policy strict --report relative.json -- true
	REPORT=$WS/relative.json
	report_is "a relative FILE is taken from the current directory" 'status==0' 'argv==["true"]'
}

case_policy_hash() {
	jr --policy strict --report "$WS/r1.json" -- true
	jr --policy strict --report "$WS/r2.json" -- echo another command
	jr --policy strict -D 'env set JR_REPORT_X=1' --report "$WS/r3.json" -- true
	jr --policy strict -D 'env set JR_REPORT_X=2' --report "$WS/r4.json" -- true
	jr --report "$WS/r5.json" -- true
	h1=$(sha_of "$WS/r1.json")
	h2=$(sha_of "$WS/r2.json")
	h3=$(sha_of "$WS/r3.json")
	h4=$(sha_of "$WS/r4.json")
	h5=$(sha_of "$WS/r5.json")
	check "the same policy has the same sha256, whatever the command" same "$h1" "$h2"
	check "a -D line changes it" differ "$h1" "$h3"
	check "and so does the line's value" differ "$h3" "$h4"
	check "another policy, another sha256" differ "$h1" "$h5"
	REPORT=$WS/r3.json
	report_is "a -D line is not a file" 'len(policy.files)==3'
	REPORT=$WS/r5.json
	report_is "no --policy: the default one" 'policy.name=="default"' \
		"policy.files.0==\"$JR_TOP/policy/default.pol\""

	printf 'include strict.pol\n' | ws_file custom.pol
	jr --policy "$WS/custom.pol" --report "$WS/c1.json" -- true
	printf 'include strict.pol\nhostname box\n' | ws_file custom.pol
	jr --policy "$WS/custom.pol" --report "$WS/c2.json" -- true
	check "a policy file's content is in the sha256" \
		differ "$(sha_of "$WS/c1.json")" "$(sha_of "$WS/c2.json")"
	REPORT=$WS/c2.json
	report_is "a policy given as a path is named as given" "policy.name==\"$WS/custom.pol\"" \
		"policy.files.0==\"$WS/custom.pol\"" 'len(policy.files)==4'
}

case_exit_code() {
	REPORT=$WS/report.json
	jr --report "$REPORT" -- sh -c 'exit 3'
	check_rc 3 "exit 3 gives 3, with --report"
	report_is "exitCode 3, status 3, no signal" \
		'status==3' 'exitCode==3' 'signal==null' 'signalName==null' 'timedOut==false' 'error==null'
}

case_signal() {
	REPORT=$WS/report.json
	jr --report "$REPORT" -- sh -c 'kill -KILL $$'
	check_rc 137 "killed by SIGKILL gives 137, with --report"
	report_is "signal 9, SIGKILL, status 137, no exit code" \
		'status==137' 'signal==9' 'signalName=="SIGKILL"' 'exitCode==null' 'timedOut==false'
	jr --report "$REPORT" -- sh -c 'kill -SEGV $$'
	check_rc 139 "killed by SIGSEGV gives 139"
	report_is "signal 11, SIGSEGV, status 139" \
		'status==139' 'signal==11' 'signalName=="SIGSEGV"' 'exitCode==null'
}

case_timeout() {
	REPORT=$WS/report.json
	jr --timeout 1 --report "$REPORT" -- sleep 100
	check_rc 124 "--timeout 1 -- sleep 100 gives 124, with --report"
	report_is "timedOut, status 124, sleep died of SIGTERM" \
		'status==124' 'timedOut==true' 'exitCode==null' 'signal==15' 'signalName=="SIGTERM"' \
		'error==null'
	report_is "the limits: 1000 ms, the default grace of 2000 ms; wallMs past the limit" \
		'enforcement.limits.timeMs==1000' 'enforcement.limits.killAfterMs==2000' \
		'wallMs>=1000' 'wallMs<4000'

	jr --timeout 0.5 --kill-after 0.5 --report "$REPORT" -- sh -c "trap '' TERM; sleep 100"
	check_rc 124 "a command that ignores SIGTERM still gives 124"
	report_is "it died of SIGKILL after the grace" \
		'status==124' 'timedOut==true' 'signal==9' 'signalName=="SIGKILL"' 'exitCode==null' \
		'enforcement.limits.timeMs==500' 'enforcement.limits.killAfterMs==500'

	jr --timeout 0.5 --report "$REPORT" -- sh -c 'trap "exit 7" TERM; sleep 100 & wait'
	check_rc 124 "a command that exits on SIGTERM by itself gives 124"
	report_is "its exit code is reported, and no signal" \
		'status==124' 'timedOut==true' 'exitCode==7' 'signal==null' 'signalName==null'
}

case_setup_failure() {
	REPORT=$WS/report.json
	jr --report "$REPORT" --ro /nonexistent/jailrun-path -- touch "$WS/ran"
	check_rc 125 "--ro of a missing path gives 125, with --report"
	check "nothing ran" test ! -e "$WS/ran"
	report_is "the report says why, and that nothing ran" \
		'status==125' 'type(error)=="object"' 'error.step in ["policy", "compile"]' \
		'error.message=~"/nonexistent/jailrun-path: No such file or directory"' 'error.errno==2' \
		'exitCode==null' 'signal==null' 'timedOut==false' 'execError==null'
	report_is "the policy failed before a plan existed: enforcement null" 'enforcement==null'
	msg=$(report_get error.message)
	check "error.message is the line jailrun printed" grep -qxF "jailrun: $msg" "$ERR"

	jr --report "$REPORT" -w /etc/hostname -- touch "$WS/ran"
	check_rc 125 "a workspace that is a file gives 125"
	report_is "error.step compile (the policy is resolved on the host), errno ENOTDIR" \
		'status==125' 'error.step=="compile"' 'error.errno==20' \
		'error.message=~"workspace /etc/hostname: Not a directory"' 'enforcement==null'

	# A mount point missing beneath a host bind: found while the jail is
	# built, after the plan was made.
	jr --report "$REPORT" --tmpfs "$WS/missing/sub" -- touch "$WS/ran"
	check_rc 125 "a mount point missing beneath the workspace gives 125"
	check "nothing ran" test ! -e "$WS/ran"
	report_is "error.step setup, errno ENOENT, with the plan's enforcement" \
		'status==125' 'error.step=="setup"' 'error.errno==2' "error.message=~\"$WS/missing/sub\"" \
		'type(enforcement)=="object"' 'exitCode==null' 'signal==null' 'execError==null'
	msg=$(report_get error.message)
	check "error.message is the line jailrun printed" grep -qxF "jailrun: $msg" "$ERR"

	jr --report "$REPORT" -D 'landlock require 64' -- touch "$WS/ran"
	check_rc 125 "an unenforceable clause gives 125"
	check "nothing ran" test ! -e "$WS/ran"
	report_is "error.step enforcement, with the plan's clauses" \
		'status==125' 'error.step=="enforcement"' \
		"error.message=~\"'landlock require 64' is not enforced\"" 'error.errno==null' \
		'type(enforcement)=="object"' 'enforcement.clauses.notEnforced>=1' \
		'type(policy.sha256)=="string"' 'exitCode==null' 'signal==null'
	msg=$(report_get error.message)
	check "error.message is the line jailrun printed" grep -qxF "jailrun: $msg" "$ERR"
}

case_policy_error() {
	REPORT=$WS/report.json
	printf 'include strict.pol\nbogus directive\n' | ws_file bad.pol
	jr --policy "$WS/bad.pol" --report "$REPORT" -- touch "$WS/ran"
	check_rc 125 "a policy syntax error gives 125, with --report"
	check "nothing ran" test ! -e "$WS/ran"
	report_is "error.step policy, FILE:LINE:COL in the message, no plan" \
		'status==125' 'error.step=="policy"' "error.message=~\"bad.pol:2:1: unknown directive 'bogus'\"" \
		'enforcement==null' 'exitCode==null'
	report_is "the policy was read: named as given, hashed, its file listed first" \
		"policy.name==\"$WS/bad.pol\"" "policy.files.0==\"$WS/bad.pol\"" \
		'type(policy.sha256)=="string"'

	jr -D 'bogus x' --report "$REPORT" -- touch "$WS/ran"
	check_rc 125 "a bad -D line gives 125"
	report_is "error.step policy for it too" \
		'status==125' 'error.step=="policy"' 'error.message=~"<command line>:1:1: unknown directive"'

	jr --policy /nonexistent/jailrun.pol --report "$REPORT" -- touch "$WS/ran"
	check_rc 125 "a missing policy file gives 125"
	check "nothing ran" test ! -e "$WS/ran"
	report_is "a policy that could not be read has no sha256 and no files" \
		'status==125' 'error.step=="policy"' 'error.errno==2' 'policy.sha256==null' \
		'policy.files==[]' 'policy.name=="/nonexistent/jailrun.pol"' 'enforcement==null'
}

case_exec_errors() {
	REPORT=$WS/report.json
	jr --report "$REPORT" -- no-such-command-xyz
	check_rc 127 "a missing command gives 127, with --report"
	report_is "execError: command not found" \
		'status==127' 'execError=="command not found"' 'error==null' 'signal==null' 'timedOut==false'
	printf '#!/bin/sh\necho ran\n' | ws_file script
	jr --report "$REPORT" -- ./script
	check_rc 126 "a non-executable file gives 126"
	report_is "execError: strerror of EACCES" \
		'status==126' 'execError=="Permission denied"' 'error==null' 'signal==null'
}

case_report_to_stderr() {
	jr --report - -- sh -c 'echo to-out; echo to-err >&2'
	check_rc 0 "--report - runs the command"
	check "stdout holds the command's output only" test "$(cat "$OUT")" = to-out
	check "the command's stderr comes first on stderr" test "$(head -n 1 "$ERR")" = to-err
	stderr_report_is "the report is the last JSON object on stderr" \
		'status==0' 'exitCode==0' 'argv==["sh","-c","echo to-out; echo to-err >&2"]'
	jr --report - --ro /nonexistent/jailrun-path -- touch "$WS/ran"
	check_rc 125 "a setup failure with --report - gives 125"
	check "the error line is there" contains "$ERR" "jailrun: "
	stderr_report_is "followed by the report of the failure" \
		'status==125' 'type(error)=="object"' 'error.message=~"/nonexistent/jailrun-path"'
}

case_report_unwritable() {
	jr --report /proc/nonexistent/report.json -- touch "$WS/ran"
	check_rc 125 "a report that cannot be created gives 125"
	check "before anything ran" test ! -e "$WS/ran"
	check "naming the file" contains "$ERR" "/proc/nonexistent/report.json"
	mkdir "$WS/adir"
	jr --report "$WS/adir" -- touch "$WS/ran"
	check_rc 125 "a directory as the report gives 125"
	check "before anything ran" test ! -e "$WS/ran"
	if [ "$JR_MODE" = nobody ] && [ "$(stat -c %a /root)" = 700 ]; then
		jr --report /root/jailrun-report.json -- touch "$WS/ran"
		check_rc 125 "a report where the caller cannot write gives 125"
		check "before anything ran" test ! -e "$WS/ran"
		check "and no report was made" test ! -e /root/jailrun-report.json
	fi
	REPORT=$WS/report.json
	head -c 100000 /dev/zero | tr '\0' x | ws_file report.json
	jr --report "$REPORT" -- true
	report_is "a longer file in the way is truncated (O_TRUNC): one JSON object" 'status==0'
	jr --report /dev/full -- true
	check_rc 125 "a report that cannot be written in full gives 125, not the command's 0"
}

# The jail can write the workspace, so a report kept there could be
# forged by the command; jailrun must never let a forgery pass as its own.
case_report_forgery() {
	REPORT=$WS/report.json
	jr --report "$REPORT" -- sh -c 'rm -f report.json; echo "{\"status\":0,\"forged\":true}" > report.json'
	check_rc 125 "a report replaced by the command during the run gives 125"
	check "saying so" contains "$ERR" "replaced during the run"
	jr --report "$REPORT" -- sh -c 'mv report.json elsewhere.json; ln -s /etc/passwd report.json; exit 0'
	check_rc 125 "a report replaced by a symlink gives 125 too"
	check "and the symlink's target was not written" sh -c "! grep -q reportVersion /etc/passwd"
	# A later run does not write through what an earlier jail left there.
	victim=$(dirname "$WS")/victim
	echo victim-content > "$victim"
	chown "$CASE_UID" "$victim"
	rm -f "$WS/report.json"
	jr -- ln -s "$victim" report.json
	jr --report "$REPORT" -- touch "$WS/ran"
	check_rc 125 "a symlink at the report's name is refused before anything runs"
	check "the command did not run" test ! -e "$WS/ran"
	check "and the symlink's target is untouched" test "$(cat "$victim")" = victim-content
	rm -f "$WS/report.json"
	jr -- mkfifo report.json
	jr --report "$REPORT" -- true
	check_rc 125 "a FIFO at the report's name is refused (it would hang jailrun)"
	rm -f "$WS/report.json"
	outside=$(dirname "$WS")/outside
	mkdir -p "$outside" && chown "$CASE_UID" "$outside"
	jr -- ln -s "$outside" out
	jr --report "$WS/out/report.json" -- true
	check_rc 125 "a report directory reached through a symlink in the workspace is refused"
	check "and nothing was created where it points" test ! -e "$outside/report.json"
	rm -f "$WS/out" "$WS/report.json" "$WS/elsewhere.json"
	jr --report "$REPORT" -- true "$(printf 'bad\377utf8')"
	report_is "argv that is not UTF-8 still gives a valid report" 'status==0'

	jr --report "$REPORT" -- sh -c 'echo "{\"status\":0,\"forged\":true}" > report.json; exit 4'
	check_rc 4 "a report overwritten in place is rewritten from its start"
	report_is "and is jailrun's own (exitCode 4, no forged key)" 'status==4' 'exitCode==4'
}

case_output_limit() {
	REPORT=$WS/report.json
	jr --report "$REPORT" -D 'limit output 100' -- sh -c 'head -c 1000 /dev/zero | tr "\0" x'
	check_rc 0 "limit output 100: the command still succeeds (the rest is read and dropped)"
	check "exactly 100 bytes of the output pass" \
		test "$(grep -v 'output truncated' "$OUT" | tr -cd x | wc -c)" -eq 100
	check "then the marker line" \
		grep -qxF '[jailrun: output truncated at 100 bytes (limit output)]' "$OUT"
	check "and nothing more" test "$(wc -c <"$OUT")" -le 160
	report_is "outputBytes counts all 1000 bytes produced, truncated true" \
		'outputBytes==1000' 'truncated==true' 'enforcement.limits.outputBytes==100' 'status==0'

	jr --report "$REPORT" --output-limit 1K -- sh -c 'head -c 600 /dev/zero | tr "\0" x'
	check "--output-limit 1K passes 600 bytes whole" test "$(wc -c <"$OUT")" -eq 600
	report_is "outputBytes 600, not truncated, limit 1024" \
		'outputBytes==600' 'truncated==false' 'enforcement.limits.outputBytes==1024'

	jr --report "$REPORT" --output-limit 100 -- sh -c \
		'head -c 60 /dev/zero | tr "\0" a; head -c 60 /dev/zero | tr "\0" b >&2'
	check "stdout and stderr share the budget: 100 bytes of both pass" \
		test "$(cat "$OUT" "$ERR" | grep -v 'output truncated' | tr -cd ab | wc -c)" -eq 100
	report_is "outputBytes counts both streams" 'outputBytes==120' 'truncated==true'

	jr --report "$REPORT" --pty -- printf abcde
	report_is "with a pty, the output is relayed and counted" \
		'type(outputBytes)=="integer"' 'outputBytes>=5' 'truncated==false'
	jr --report "$REPORT" --pty --output-limit 10 -- sh -c 'head -c 1000 /dev/zero | tr "\0" x'
	check "limit output holds on the pty too" \
		test "$(grep -v 'output truncated' "$OUT" | tr -cd x | wc -c)" -eq 10
	report_is "and is reported" 'truncated==true' 'outputBytes>=1000'
}

case_seccomp_denials() {
	REPORT=$WS/report.json
	# Denied by strict.pol: mount and umount2 (@mount) with EPERM, clone3
	# (@namespaces) with ENOSYS.  Outside a filter these fail otherwise
	# (ENOENT, EINVAL), and the paths make them harmless anywhere.
	ws_file deny.py <<'EOF'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, call):
    ctypes.set_errno(0)
    r = call()
    print(name, r, ctypes.get_errno())
for _ in range(5):
    attempt("mount", lambda: libc.mount(b"none", b"/nonexistent-jailrun-path", b"jailrun-no-such-fs", 0, None))
for _ in range(3):
    attempt("umount2", lambda: libc.umount2(b"/nonexistent-jailrun-path", 0))
for _ in range(3):
    attempt("clone3", lambda: libc.syscall(435, None, 0))
EOF
	jr --policy strict -- python3 deny.py
	cp "$OUT" "$WS/without-report"
	jr --policy strict --report "$REPORT" -- python3 deny.py
	check_rc 0 "a command whose syscalls strict denies runs with --report"
	check "each denied call failed with the policy's errno (EPERM for mount)" test "$(lines_of 'mount -1 1')" -eq 5
	check "(EPERM for umount2)" test "$(lines_of 'umount2 -1 1')" -eq 3
	check "(ENOSYS for clone3)" test "$(lines_of 'clone3 -1 38')" -eq 3
	check "as it does without --report" cmp -s "$OUT" "$WS/without-report"
	report_is "the denials are counted per syscall" \
		'enforcement.seccomp.denialsCounted==true' \
		'denials.seccomp[syscall=mount].count==5' 'denials.seccomp[syscall=umount2].count==3'
	# clone3's ENOSYS is libc's cue to fall back to clone, not a denial:
	# answered in the kernel, never counted (a thread would cost a trip
	# to the supervisor otherwise).
	report_is "clone3's ENOSYS is not counted" 'exists(denials.seccomp[syscall=clone3])==false' \
		'len(denials.seccomp)==2'
	report_is "sorted by count, then name" 'denials.seccomp.0.syscall=="mount"' \
		'denials.seccomp.1.syscall=="umount2"'
	jr --policy strict --report "$REPORT" -- python3 -c '
import threading
ts = [threading.Thread(target=lambda: None) for _ in range(50)]
[t.start() for t in ts]; [t.join() for t in ts]; print("threads ok")'
	check "threads start under strict with --report" contains "$OUT" "threads ok"
	report_is "and none of them shows up as a denial" 'denials.seccomp==[]'

	PRIO='import os
for _ in range(4):
    try:
        os.getpriority(os.PRIO_PROCESS, 0)
        print("getpriority ok")
    except OSError as e:
        print("getpriority", e.errno)
for _ in range(2):
    print("getppid", os.getppid())'
	jr --policy strict -D 'seccomp deny getpriority errno ENOTTY' -D 'seccomp deny getppid log' \
		--report "$REPORT" -- python3 -c "$PRIO"
	check_rc 0 "errno and log rules of a -D line, with --report"
	check "the errno rule answers its own errno (ENOTTY)" test "$(lines_of 'getpriority 25')" -eq 4
	check "the log rule lets the call run (the parent is the jail's init)" \
		test "$(lines_of 'getppid 1')" -eq 2
	report_is "both are counted" 'denials.seccomp[syscall=getpriority].count==4' \
		'denials.seccomp[syscall=getppid].count==2'

	jr --policy strict -D 'seccomp deny getpriority kill' --report "$REPORT" -- python3 -c "$PRIO"
	check_rc 159 "a kill rule kills the process with SIGSYS, with --report"
	report_is "the report says SIGSYS, and kill rules are not counted" \
		'signal==31' 'signalName=="SIGSYS"' 'status==159' \
		'exists(denials.seccomp[syscall=getpriority])==false'

	jr --policy strict -D 'seccomp deny sendmsg' -D 'seccomp deny getpriority errno ENOTTY' \
		--report "$REPORT" -- python3 -c "$PRIO"
	check_rc 0 "a policy denying sendmsg (the listener's hand-over) still runs"
	check "and its rules still hold" test "$(lines_of 'getpriority 25')" -eq 4
	report_is "denialsCounted false, no denials listed" \
		'enforcement.seccomp.denialsCounted==false' 'denials.seccomp==[]'
}

case_permissive() {
	REPORT=$WS/report.json
	jr --policy permissive --report "$REPORT" -- true
	check_rc 0 "the permissive policy, with --report"
	if [ "$JR_MODE" = root ]; then
		report_is "root: no policy rules, only jailrun's own (the setuid guard)" \
			'type(enforcement.seccomp)=="object"' 'enforcement.seccomp.rules==0' \
			'enforcement.seccomp.builtinRules>0' 'denials.seccomp==[]'
	else
		report_is "no filter at all: seccomp null" 'enforcement.seccomp==null' 'denials.seccomp==[]'
	fi
}

case_landlock_isolation() {
	REPORT=$WS/report.json
	jr --isolation landlock -D 'landlock best-effort' --report "$REPORT" -- true
	if [ "$JR_MODE" = root ]; then
		check_rc 125 "isolation landlock is refused for root, with --report"
		report_is "and reported as an error" 'status==125' 'type(error)=="object"'
		return
	fi
	check_rc 0 "isolation landlock, with --report"
	report_is "isolation landlock: no namespaces, Landlock in force" \
		'enforcement.isolation=="landlock"' 'enforcement.namespaces==[]' \
		'type(enforcement.landlock)=="object"'
}

case_limit_flags() {
	REPORT=$WS/report.json
	jr --memory 256M --pids 64 --output-limit 1K --report "$REPORT" -- true
	check_rc 0 "--memory, --pids and --output-limit"
	report_is "set the limits" 'enforcement.limits.memoryBytes==268435456' \
		'enforcement.limits.pids==64' 'enforcement.limits.outputBytes==1024' \
		'enforcement.clauses.notEnforced==0'
	jr -D 'limit memory 256M' -D 'limit pids 64' -D 'limit output 1K' --report "$REPORT" -- true
	report_is "as the limit lines do" 'enforcement.limits.memoryBytes==268435456' \
		'enforcement.limits.pids==64' 'enforcement.limits.outputBytes==1024'
	jr --pids 64 --report "$REPORT" -- sh -c 'for i in 1 2 3 4 5; do sleep 0.5 & done; wait'
	if [ "$JR_MODE" = root ]; then
		report_is "as root by cgroup v1" 'enforcement.limits.mechanism=="cgroup-v1"'
		# The spec says pidsPeak is null when unknown; this kernel's
		# cgroup v1 pids controller has pids.peak, so it is known.
		probe=/sys/fs/cgroup/pids/jailrun-report-probe-$$
		if mkdir "$probe" 2>/dev/null; then
			has_peak=no
			[ -e "$probe/pids.peak" ] && has_peak=yes
			rmdir "$probe"
			if [ $has_peak = yes ]; then
				report_is "pidsPeak: the pids cgroup's peak (sh and 5 sleeps at once)" \
					'type(pidsPeak)=="integer"' 'pidsPeak>=6' 'pidsPeak<=64'
			else
				report_is "pidsPeak null: this kernel's pids cgroup has no peak" 'pidsPeak==null'
			fi
		fi
		jr --memory 256M --report "$REPORT" -- true
		report_is "a memory cgroup: its peak is reported" \
			'enforcement.limits.mechanism=="cgroup-v1"' 'type(memoryPeakBytes)=="integer"' \
			'memoryPeakBytes>0' "memoryPeakBytes<=$((256 << 20))"
	else
		report_is "unprivileged by rlimits, with no cgroup peaks" \
			'enforcement.limits.mechanism=="rlimit"' 'pidsPeak==null' 'memoryPeakBytes==null'
	fi
}

case_memory() {
	REPORT=$WS/report.json
	jr -D 'limit memory 64M' --report "$REPORT" -- python3 -c 'b = b"x" * (512 << 20); print("allocated")'
	check "512 MiB under limit memory 64M is not allocated" lacks "$OUT" allocated
	if [ "$JR_MODE" = root ]; then
		check_rc 137 "as root the cgroup's OOM killer ends it"
		report_is "oomKilled, SIGKILL, the cgroup's peak at most the limit" \
			'oomKilled==true' 'status==137' 'signal==9' 'signalName=="SIGKILL"' \
			'type(memoryPeakBytes)=="integer"' "memoryPeakBytes>=$((32 << 20))" \
			"memoryPeakBytes<=$((64 << 20))" 'enforcement.limits.memoryBytes==67108864' \
			'enforcement.limits.mechanism=="cgroup-v1"'
	else
		check_rc 1 "unprivileged (RLIMIT_AS) python gets a MemoryError"
		report_is "no OOM kill, no cgroup peak" \
			'oomKilled==false' 'memoryPeakBytes==null' 'exitCode==1' \
			'enforcement.limits.memoryBytes==67108864' 'enforcement.limits.mechanism=="rlimit"'
	fi
}

case_resources() {
	REPORT=$WS/report.json
	ws_file burn.py <<'EOF'
import time
t = time.process_time()
while time.process_time() - t < 0.6:
    for _ in range(100000):
        pass
b = b"x" * (100 << 20)
print(len(b))
EOF
	jr --report "$REPORT" -- sh -c 'python3 burn.py; echo done'
	check_rc 0 "a command that burns 0.6 s of CPU and 100 MiB in a child"
	report_is "its CPU time is counted (a descendant, reaped)" 'userMs>=300' 'userMs<30000' \
		'sysMs>=0' 'wallMs>=500'
	report_is "maxRssKb: the largest process, in KiB" 'maxRssKb>=102400' 'maxRssKb<1048576'
	jr --report "$REPORT" -- sleep 0.5
	report_is "a sleep takes wall time but no CPU" 'wallMs>=500' 'wallMs<5000' 'userMs<300' \
		'maxRssKb>0'
}

run_cases case_success case_policy_hash case_exit_code case_signal case_timeout case_report_forgery \
	case_setup_failure case_policy_error case_exec_errors case_report_to_stderr \
	case_report_unwritable case_output_limit case_seccomp_denials case_permissive \
	case_landlock_isolation case_limit_flags case_memory case_resources
