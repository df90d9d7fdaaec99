#!/bin/sh
# Seccomp denials counted through a user-notification listener (--report):
# the listener never reaches the command, every denial is still answered
# exactly as the policy says, and counting never weakens a rule.
. "$JR_SRCDIR/tests/integration/lib.sh"


# field FILE EXPR: prints a value of the report (python expression on r).
field() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

denied() { # FILE SYSCALL -> its count; 0 when there is none (or no report)
	field "$1" "sum(d['count'] for d in r['denials']['seccomp'] if d['syscall']=='$2')" 2>/dev/null || echo 0
}

# In the case's own directory, which the case's user owns.
report() { echo "$(dirname "$WS")/$1.json"; }

case_listener_not_in_the_jail() {
	R=$(report fds)
	jr --report "$R" -- sh -c 'ls -l /proc/self/fd/ | grep -c -- "->"; ls -l /proc/self/fd/'
	check_rc 0 "a run with --report works"
	check "the command holds only 0, 1, 2 and ls's own directory (no seccomp listener)" test "$(head -1 "$OUT")" -eq 4
	check "no anon_inode:seccomp descriptor in the jail" lacks "$OUT" "seccomp"
	check "and the report says denials were counted" test "$(field "$R" "r['enforcement']['seccomp']['denialsCounted']")" = True
}

case_errno_as_the_policy_says() {
	R=$(report errno)
	jr --report "$R" -D 'seccomp deny mkdir mkdirat errno EACCES' -- sh -c 'mkdir made; echo "rc=$?"; mkdir made2; mkdir made3; true'
	check "mkdir is refused with the policy's errno (EACCES: Permission denied)" contains "$ERR" "Permission denied"
	check "and the directory really was not made" test ! -e "$WS/made" -a ! -e "$WS/made2"
	check "three denials counted" test "$(($(denied "$R" mkdir) + $(denied "$R" mkdirat)))" -eq 3
	R2=$(report errno2)
	jr --report "$R2" -D 'seccomp deny mkdir mkdirat errno EROFS' -- mkdir made
	check "another errno comes back as given (EROFS)" contains "$ERR" "Read-only file system"
	check "still not made" test ! -e "$WS/made"
}

case_log_lets_through() {
	R=$(report log)
	jr --report "$R" -D 'seccomp deny mkdir mkdirat log' -- sh -c 'mkdir logged && echo made'
	check_rc 0 "a log rule lets the call run"
	check "the directory was made" test -d "$WS/logged"
	check "and the call was counted" test "$(($(denied "$R" mkdir) + $(denied "$R" mkdirat)))" -ge 1
}

case_children_counted_too() {
	R=$(report kids)
	jr --report "$R" --policy strict -- sh -c 'for i in 1 2 3 4 5; do (unshare -U true 2>/dev/null) & done; wait'
	check "denials of forked children reach the same listener" test "$(denied "$R" unshare)" -eq 5
}

case_unenforced_without_listener() {
	R=$(report nosend)
	# The hand-over needs sendmsg: a policy denying it gets no counting,
	# and loses nothing of its rules.
	jr --report "$R" -D 'seccomp deny sendmsg mkdir mkdirat errno EACCES' -- sh -c 'mkdir nolistener'
	check "a policy denying sendmsg still runs" test "$RC" -ne 125
	check "mkdir is still refused" test ! -e "$WS/nolistener"
	check "and the report says denials were not counted" test "$(field "$R" "r['enforcement']['seccomp']['denialsCounted']")" = False
	check "with no counts pretending otherwise" test "$(field "$R" "len(r['denials']['seccomp'])")" -eq 0
}

case_kill_rules_stay_kill() {
	R=$(report kill)
	jr --report "$R" -D 'seccomp deny mkdir mkdirat kill' -- mkdir killed
	check "a kill rule still kills (SIGSYS: 128+31)" test "$RC" -eq 159
	check "nothing was made" test ! -e "$WS/killed"
}

case_supervisor_killed_mid_denial() {
	# jailrun SIGKILLed while the jail keeps making denied calls: the jail
	# dies with it (no call is ever let through by a missing answer).
	R=$(report killed)
	jr_background --report "$R" -D 'seccomp deny mkdir mkdirat errno EACCES' -- \
		sh -c 'while :; do mkdir -p denial-loop-marker-$$ 2>/dev/null; done'
	sleep 0.5
	kill -KILL "$JR_PID"
	wait "$JR_PID" 2>/dev/null
	check "the jail is gone within 5 s of its supervisor" gone_within_5s "sh -c while :; do mkdir -p denial-loop"
	check "and no denied mkdir ever succeeded" sh -c "! ls '$WS' | grep -q denial-loop-marker"
}

run_cases case_listener_not_in_the_jail case_errno_as_the_policy_says case_log_lets_through \
	case_children_counted_too case_unenforced_without_listener case_kill_rules_stay_kill \
	case_supervisor_killed_mid_denial
