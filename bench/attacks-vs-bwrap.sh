#!/bin/sh
# Which of the attacks in tests/helpers/attack.c bubblewrap's defaults let
# through and jailrun's strict.pol stops.  Run from a build tree:
#   sh ../bench/attacks-vs-bwrap.sh
# bubblewrap is run the way its README suggests for a sandboxed command:
# every namespace unshared, the system read-only, a private /tmp.
set -u
here=$(pwd)
attack=$here/tests/helpers/attack
jailrun=$here/jailrun
[ -x "$attack" ] || make -s tests/helpers/attack
command -v bwrap >/dev/null || { echo "bwrap not installed (apt-get install bubblewrap)"; exit 1; }
ws=$(mktemp -d /tmp/jailrun-vs-bwrap.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cp "$attack" "$ws/attack"
cd "$ws" || exit 1
export JAILRUN_POLICY_PATH=${JAILRUN_POLICY_PATH:-$here/../policy}

run_bwrap() {
	bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc \
		--tmpfs /tmp --bind "$ws" "$ws" --chdir "$ws" "$@" 2>&1
}
outcome() { out=$("$@"); rc=$?; [ -n "$out" ] && echo "$out" | tail -1 || echo "exit $rc"; }

printf '%-20s %-28s %s\n' attack "bwrap (defaults)" "jailrun --policy strict"
for a in io_uring keyctl bpf perf_event_open ptrace clone-newuser clone3 name_to_handle_at \
	open_by_handle_at personality int80; do
	b=$(outcome run_bwrap ./attack "$a")
	j=$(outcome "$jailrun" --policy strict -- ./attack "$a")
	printf '%-20s %-28s %s\n' "$a" "$b" "$j"
done
b=$(outcome run_bwrap sh -c 'unshare -Urm sh -c "mount -t tmpfs none /tmp && echo mounted" 2>&1 || echo refused')
j=$(outcome "$jailrun" --policy strict -- sh -c 'unshare -Urm sh -c "mount -t tmpfs none /tmp && echo mounted" 2>&1 || echo refused')
printf '%-20s %-28s %s\n' "unshare -Urm; mount" "$b" "$j"
inject='import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x"); print("allowed")
except OSError as e: print("denied", e.errno)'
b=$(python3 "$here/../tests/integration/pty-run.py" -- bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc python3 -c "$inject" 2>/dev/null | tail -1)
j=$(python3 "$here/../tests/integration/pty-run.py" -- "$jailrun" --policy strict --no-pty -- python3 -c "$inject" 2>/dev/null | tail -1)
printf '%-20s %-28s %s\n' "TIOCSTI (caller tty)" "$b" "$j"
