#!/bin/sh
# Escapes the seccomp filter of strict.pol must stop.  Each attack runs
# three times: under strict.pol (refused), under permissive.pol (the
# control: no filter, so a difference is visible), and under permissive.pol
# with only that syscall denied with a marker errno (EXFULL), which proves
# the filter is what intercepts it even where the kernel would refuse too.
. "$JR_SRCDIR/tests/integration/lib.sh"

: "${JR_ATTACK:?JR_ATTACK must name tests/helpers/attack}"

attack() {
	cp "$JR_ATTACK" "$WS/attack"
	chown "$CASE_UID" "$WS/attack"
	name=$1
	syscall=$2
	strict_expect=$3
	control_expect=${4:-allowed} # what the kernel itself says without a filter
	jr --policy strict -- ./attack "$name"
	strict_rc=$RC
	strict_out=$(cat "$OUT")
	# No writable tree of the caller's: for a root caller one would bring
	# jailrun's own setuid filter, and the control must run with none.
	jr --policy permissive -D 'workspace ro' -D 'home tmpfs' -- ./attack "$name"
	control_out=$(cat "$OUT")
	jr --policy permissive -D "seccomp deny $syscall errno EXFULL" -- ./attack "$name"
	marker_out=$(cat "$OUT")
	marker_rc=$RC
	if [ "$strict_expect" = killed ]; then
		check "$name: strict.pol kills the process (SIGSYS)" test "$strict_rc" -eq 159
		check "$name: without a filter it runs ($control_out)" test "$control_out" = allowed
		check "$name: any filter kills it" test "$marker_rc" -eq 159
		return
	fi
	check "$name: strict.pol refuses it ($strict_expect)" test "$strict_out" = "denied $strict_expect"
	check "$name: the filter is what refuses it" test "$marker_out" = "denied EXFULL"
	check "$name: without a filter the kernel says: $control_expect" test "$control_out" = "$control_expect"
}

case_io_uring() { attack io_uring io_uring_setup EPERM; }
case_keyring() { attack keyctl add_key EPERM; }
case_bpf() { attack bpf bpf EPERM "denied EPERM"; } # the jail lacks CAP_BPF anyway
case_perf() { attack perf_event_open perf_event_open EPERM; }
case_ptrace() { attack ptrace ptrace EPERM; }
case_nested_userns_clone() { attack clone-newuser clone EPERM; }
case_clone3_enosys() { attack clone3 clone3 ENOSYS; }
case_handles() {
	attack name_to_handle_at name_to_handle_at EPERM
	attack open_by_handle_at open_by_handle_at EPERM "denied EPERM" # needs CAP_DAC_READ_SEARCH anyway
}
case_personality() { attack personality personality EPERM; }
case_i386_abi() { attack int80 getpid killed; }
# stdin is /dev/null: without the filter the kernel answers ENOTTY.
case_tiocsti_high_bits() { attack tiocsti64 ioctl EPERM "denied ENOTTY"; }

case_setid_guard_holds() {
	[ "$JR_MODE" = root ] || return 0 # the guard is for root callers
	# A policy rule on the same syscall, or io_uring, must not undo it.
	jr --policy permissive -D 'seccomp deny fchmodat log' -- sh -c 'touch f; chmod 4755 f'
	check "a policy rule on fchmodat does not override the setuid guard" test ! -u "$WS/f"
	cp "$JR_ATTACK" "$WS/attack"
	jr --policy permissive -- ./attack io_uring
	check "io_uring (which could open with any mode) is refused for a root caller" test "$(cat "$OUT")" = "denied EPERM"
}

case_nested_userns_mount() {
	# The classic escape ladder: a nested user namespace gives back every
	# capability, then mount.  Without a filter the first step works.
	jr --policy permissive -- unshare -U true
	check_rc 0 "without a filter a nested user namespace can be made (control)"
	jr --policy strict -- sh -c 'unshare -Urm sh -c "mount -t tmpfs none /tmp && echo mounted"'
	check "strict.pol: unshare -Urm is refused" lacks "$OUT" mounted
	check "with EPERM" contains "$ERR" "Operation not permitted"
}

case_setid_bits() {
	# A root caller's jail is root on disk in the workspace: a setuid bit
	# set there would be a root program on the host.  Refused for every
	# policy, by a filter jailrun adds itself.
	jr --policy permissive -- sh -c 'cp /bin/id x; chmod 4755 x; install -m 2755 /bin/id y; python3 -c "import os; os.open(\"z\", os.O_CREAT | os.O_WRONLY, 0o4755)"; chmod 755 x && echo plain-ok'
	check "ordinary modes can be set" contains "$OUT" plain-ok
	if [ "$JR_MODE" = root ]; then
		check "setuid/setgid bits cannot be set in the workspace" sh -c "! find '$WS' -perm /6000 | grep -q ."
		jr --policy permissive --explain
		check "--explain says so for a root caller" contains "$OUT" "setuid/setgid bits refused"
	else
		check "an unprivileged caller's setuid files are its own, as outside (harmless)" \
			sh -c "! find '$WS' -perm /6000 ! -user $CASE_UID | grep -q ."
	fi
}

case_landlock_exec() {
	cp /bin/true "$WS/mytrue"
	chown "$CASE_UID" "$WS/mytrue"
	jr -- ./mytrue
	check_rc 0 "a program in the workspace runs (control)"
	jr -D 'exec /usr' -- ./mytrue
	check_rc 126 "with exec /usr, Landlock refuses to execute it"
	jr -D 'exec /usr' -- /usr/bin/true
	check_rc 0 "while /usr/bin/true still runs"
	jr -D 'exec /usr' -- /lib64/ld-linux-x86-64.so.2 ./mytrue
	check "the dynamic loader cannot map it either (the workspace is noexec)" test "$RC" -ne 0
	jr -- /lib64/ld-linux-x86-64.so.2 ./mytrue
	check_rc 0 "which it can without exec narrowing (control)"
	jr -D 'exec /usr' -- sh -c 'cp ./mytrue /dev/shm/t && /lib64/ld-linux-x86-64.so.2 /dev/shm/t'
	check "nor from /dev/shm" test "$RC" -ne 0
	jr -D 'exec /usr' -- python3 -c 'import os
fd = os.memfd_create("x", 8)  # MFD_NOEXEC_SEAL
os.write(fd, open("/usr/bin/true", "rb").read())
try:
    os.execv("/proc/self/fd/%d" % fd, ["true"])
except OSError:
    print("memfd-refused")
try:
    os.memfd_create("y"); print("unsealed-allowed")
except OSError:
    print("unsealed-refused")'
	check "a memfd cannot be executed" contains "$OUT" memfd-refused
	check "and an unsealed memfd cannot be made" contains "$OUT" unsealed-refused
}

case_landlock_scopes() {
	jr --policy strict -- sh -c 'sleep 5 & kill -0 $! && echo own-child-ok; kill -0 1 || echo init-refused'
	check "the command can signal its own children (control)" contains "$OUT" own-child-ok
	check "but not jailrun's init, outside its Landlock domain" contains "$OUT" init-refused
	name=jailrun-test-$$-$JR_MODE
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(1); time.sleep(6)' "$name" &
	srv=$!
	sleep 0.3
	jr --policy strict -- python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + sys.argv[1]); print("connected")
except OSError as e:
    print("refused", e.errno)' "$name"
	check "a host abstract unix socket is out of reach" contains "$OUT" refused
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
}

case_landlock_require() {
	jr -D 'landlock require 64' -- touch "$WS/ran"
	check_rc 125 "landlock require above this kernel's ABI fails closed"
	check "saying what the kernel has" contains "$ERR" "needs Landlock ABI 64, this kernel has"
	check "and nothing ran" test ! -e "$WS/ran"
	jr -D 'landlock require 64' -D 'landlock best-effort' -- true
	check_rc 0 "with best-effort it runs with what the kernel has"
	jr -D 'landlock require 64' -D 'landlock best-effort' --explain
	check "and --explain says what was dropped" contains "$OUT" "(dropped: best-effort)"
}

case_ordinary_work() {
	# What a developer runs must keep working under the filter.  One
	# command a line: under set -e a failure inside an && list would not
	# stop the script.
	as_user git -C "$WS" init -q
	jr --policy strict -- sh -c 'set -e
		printf "int main(void){return 0;}\n" > t.c
		cc -o t t.c
		./t
		printf "all:\n\t@echo made\n" > Makefile
		make -s
		python3 -c "import subprocess, socket, threading; print(\"py\")"
		top -b -n1 >/dev/null
		git log --oneline >/dev/null 2>&1 || git status --short >/dev/null
		ps -e >/dev/null
		echo x | cat | wc -c >/dev/null
		python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); c=socket.create_connection(s.getsockname()); print(\"loopback\")"
		echo ordinary-ok'
	check_rc 0 "cc, make, python3, git, ps, top, pipes and loopback sockets work under strict.pol"
	check "to the end" contains "$OUT" ordinary-ok
	jr -- sh -c 'set -e
		git add t.c
		git -c user.name=t -c user.email=t@e commit -qm t
		echo committed'
	check "git add and commit work under default.pol" contains "$OUT" committed
	jr --policy strict -- sh -c 'git -c user.name=t -c user.email=t@e commit --allow-empty -qm u'
	check "strict.pol keeps .git read-only: no commit" test "$RC" -ne 0
	check "so the history is unchanged" test "$(as_user git -C "$WS" log --oneline | wc -l)" -eq 1
	if command -v node >/dev/null && command -v npm >/dev/null; then
		jr --policy strict -- sh -c 'node -e "require(\"fs\").writeFileSync(\"n.txt\", \"node\"); require(\"child_process\").execSync(\"true\")" && npm --version >/dev/null && npm init -y >/dev/null && echo node-ok'
		check "node and npm work under strict.pol" contains "$OUT" node-ok
	else
		skip "node and npm work under strict.pol" "node/npm not installed"
	fi
}

run_cases case_io_uring case_keyring case_bpf case_perf case_ptrace case_nested_userns_clone \
	case_clone3_enosys case_handles case_personality case_i386_abi case_nested_userns_mount \
	case_setid_bits case_tiocsti_high_bits case_setid_guard_holds case_landlock_exec case_landlock_scopes case_landlock_require \
	case_ordinary_work
