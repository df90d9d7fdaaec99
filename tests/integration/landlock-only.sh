#!/bin/sh
# --isolation landlock: no namespaces, Landlock and seccomp alone.  It is
# for callers who cannot make user namespaces, so it runs as nobody; root
# is refused.  What it cannot enforce it refuses unless best-effort.
. "$JR_SRCDIR/tests/integration/lib.sh"


jr_ll() {
	jr --isolation landlock -D 'landlock best-effort' "$@"
}

case_refusals() {
	jr --isolation landlock -- touch "$WS/ran"
	check_rc 125 "shipped policies need namespaces for some clauses: refused without best-effort"
	check "nothing ran" test ! -e "$WS/ran"
	if [ "$JR_MODE" = root ]; then
		check "naming the clause" contains "$ERR" "isolation landlock: not for root"
	else
		check "naming the clause" contains "$ERR" "is not enforced: isolation landlock"
	fi
}

case_filesystem() {
	[ "$JR_MODE" = root ] && return # root is refused: case_refusals checks that
	echo host-only >"$JR_TOP/$JR_MODE/outside-file"
	chmod 644 "$JR_TOP/$JR_MODE/outside-file"
	jr_ll -- sh -c "cat '$JR_TOP/$JR_MODE/outside-file'; echo w > '$JR_TOP/$JR_MODE/written'; echo in > inside; cat /etc/hostname >/dev/null && echo etc-ok"
	check "a host file outside the allowed trees is unreadable" lacks "$OUT" host-only
	check "a write outside the workspace fails and leaves nothing" test ! -e "$JR_TOP/$JR_MODE/written"
	check "the workspace is writable" test "$(cat "$WS/inside" 2>/dev/null)" = in
	check "the system is readable" contains "$OUT" etc-ok
	jr_ll -- sh -c 'echo t > "$TMPDIR/t" && echo "$TMPDIR"'
	check "TMPDIR is a private directory of the run" test -n "$(cat "$OUT")"
	check "removed afterwards" test ! -e "$(cat "$OUT")"
}

case_secrets() {
	[ "$JR_MODE" = root ] && return # root is refused: case_refusals checks that
	echo "tool config" >"$FIXHOME/.toolrc"
	chown "$CASE_UID" "$FIXHOME/.toolrc"
	JR_ENV="GITHUB_TOKEN=tok-ll"
	jr_ll --policy default -- sh -c 'cat ~/.toolrc; cat ~/.ssh/id_rsa; env'
	JR_ENV=
	check "default.pol: the home is readable" contains "$OUT" "tool config"
	check "but the masked key is not (Landlock grants the home entry by entry)" lacks "$OUT" jailrun-test-secret
	check "secrets are scrubbed from the environment" lacks "$OUT" tok-ll
	jr_ll --policy strict -- sh -c 'echo "$HOME"; cat '"$FIXHOME"'/.ssh/id_rsa'
	check "strict.pol: the real home is out of reach" lacks "$OUT" jailrun-test-secret
}

case_network_and_sockets() {
	[ "$JR_MODE" = root ] && return # root is refused: case_refusals checks that
	sock=$JR_TOP/$JR_MODE/host.sock
	python3 -c 'import socket, sys, time, os
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(1); time.sleep(6)' "$sock" &
	srv=$!
	sleep 0.3
	jr_ll -- python3 -c 'import socket, sys
for fam, addr in ((socket.AF_INET, ("127.0.0.1", 1)), (socket.AF_UNIX, sys.argv[1])):
    try:
        socket.socket(fam).connect(addr); print("reached", int(fam))
    except OSError as e:
        print("refused", int(fam), e.errno)' "$sock"
	check "net none: no IP socket can be made" contains "$OUT" "refused 2 13"
	check "a host unix socket is out of reach" contains "$OUT" "refused 1 13"
	cp "$JR_ATTACK" "$WS/attack"
	chown "$CASE_UID" "$WS/attack"
	jr_ll -- ./attack socket64
	check "not with a family whose high bits are set either" test "$(cat "$OUT")" = "denied EACCES"
	jr_ll --policy permissive -- ./attack io_uring
	check "io_uring (which makes sockets without socket()) is refused even under permissive.pol" \
		test "$(cat "$OUT")" = "denied EPERM"
	qid=$(as_user ipcmk -Q -p 0600 | grep -o '[0-9]*$')
	jr_ll -- python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(64)
r = libc.msgrcv(int(sys.argv[1]), buf, 32, 0, 0o4000)  # IPC_NOWAIT
print("msgrcv", r, ctypes.get_errno())' "$qid"
	as_user ipcrm -q "$qid" 2>/dev/null
	check "a host SysV message queue is out of reach by its id" contains "$OUT" "msgrcv -1 1"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
}

case_processes() {
	[ "$JR_MODE" = root ] && return # root is refused: case_refusals checks that
	marker=5151$$$(date +%N | cut -c1-4)
	jr_ll -- sh -c "setsid sleep $marker </dev/null >/dev/null 2>&1 & (sleep $marker.5 </dev/null >/dev/null 2>&1 &); exit 4"
	check_rc 4 "the command's status comes back"
	check "its daemons and double-forked children are killed" gone_within_5s "sleep $marker"
	sleep 300.$$2 </dev/null >/dev/null 2>&1 &
	host=$!
	jr_ll -- sh -c "kill -0 $host && echo signalled"
	check "a host process cannot be signalled (Landlock scope)" lacks "$OUT" signalled
	cp "$JR_ATTACK" "$WS/attack"
	chown "$CASE_UID" "$WS/attack"
	as_user sleep 300.$$3 </dev/null >/dev/null 2>&1 &
	same_uid=$!
	JR_ENV="ATTACK_PID=$same_uid"
	jr_ll --policy permissive -- ./attack ptrace-pid
	JR_ENV=
	check "a host process of the same user cannot be traced (Landlock)" test "$(cat "$OUT")" = "denied EPERM"
	kill "$host" "$same_uid"
	jr_ll -D 'exec /usr' -- "$WS/attack" io_uring
	check_rc 126 "exec narrowing holds without namespaces too"
}

case_pids_refused() {
	[ "$JR_MODE" = root ] && return # root is refused: case_refusals checks that
	jr_ll -D 'limit pids 10' -- true
	check_rc 125 "limit pids is refused without a user namespace (RLIMIT_NPROC would count the host's)"
}

case_explain() {
	[ "$JR_MODE" = root ] && return # root is refused: case_refusals checks that
	jr --isolation landlock --explain
	check "--explain says what this mode lacks" contains "$OUT" "Not in this mode: a pid namespace"
	check "and marks what it cannot enforce" contains "$OUT" "NOT ENFORCED: isolation landlock"
}

run_cases case_refusals case_filesystem case_secrets case_network_and_sockets case_processes \
	case_pids_refused case_explain
