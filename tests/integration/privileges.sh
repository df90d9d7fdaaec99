#!/bin/sh
# Capabilities, no_new_privs, the identity inside and outside.
. "$JR_SRCDIR/tests/integration/lib.sh"

case_capabilities() {
	jr -- grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		check "$f is 0" contains "$OUT" "$(printf '%s:\t0000000000000000' "$f")"
	done
	check "NoNewPrivs is 1" contains "$OUT" "$(printf 'NoNewPrivs:\t1')"
}

case_identity() {
	jr -- id -u
	check "the caller's uid is its uid inside" test "$(cat "$OUT")" = "$CASE_UID"
	marker=4545$$$(date +%N | cut -c1-4)
	jr_background -- sleep "$marker"
	i=0
	while [ -z "$(pids_with "sleep $marker")" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	pid=$(pids_with "sleep $marker" | head -1)
	if [ "$JR_MODE" = root ]; then
		host_uid=$(stat -c %u "/proc/$pid" 2>/dev/null)
		check "a root caller's jail does not run as host root" test "${host_uid:-0}" -ne 0
		check "nor as nobody (a shared uid)" test "${host_uid:-65534}" -ne 65534
	else
		check "an unprivileged caller's jail runs as the caller" test "$(stat -c %u "/proc/$pid" 2>/dev/null)" = "$CASE_UID"
	fi
	kill "$JR_PID"
	wait "$JR_PID" 2>/dev/null
}

case_no_privilege_regained() {
	jr -- sh -c 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m'
	check "mount fails inside" test "$RC" -ne 0
	jr -- sh -c 'echo 1 > /proc/sys/kernel/ns_last_pid'
	check "writing a namespaced sysctl fails" test "$RC" -ne 0
	# Re-executing as uid 0 (setuid-root binaries, or the jail's own uid 0)
	# must not give capabilities back: the bounding set is empty and
	# securebits are locked.
	jr -- sh -c 'exec grep ^CapEff /proc/self/status'
	check "execve does not restore capabilities" contains "$OUT" "$(printf 'CapEff:\t0000000000000000')"
}

case_init_not_readable() {
	jr -- cat /proc/1/environ
	check "init's environment is not readable by the command" test "$RC" -ne 0
	jr -- ls /proc/1/fd
	check "init's descriptors are not listable by the command" test "$RC" -ne 0
	jr -- sh -c "tr -d '\\000' </proc/1/cmdline | wc -c"
	check "init's command line (jailrun's argv) is wiped" test "$(cat "$OUT")" = 0
	jr -- ps -o tty= -p 1
	check "init holds no terminal of the caller's" test "$(tr -d ' ' <"$OUT")" = "?"
}

case_user_ids_unmapped() {
	jr -- sh -c 'cat /proc/self/uid_map; cat /proc/self/setgroups'
	check "exactly one uid is mapped" test "$(grep -c . "$OUT")" -eq 2
	check "setgroups is denied" contains "$OUT" deny
}

run_cases case_capabilities case_identity case_no_privilege_regained case_init_not_readable \
	case_user_ids_unmapped
