#!/bin/sh
# Inherited file descriptors do not leak into the jail unless kept.
. "$JR_SRCDIR/tests/integration/lib.sh"

secret_file() {
	f=$JR_TOP/$JR_MODE/fd-secret
	echo fd-secret-content >"$f"
	chown "$CASE_UID" "$f"
	chmod 600 "$f"
	echo "$f"
}

case_leaked_fd_closed() {
	f=$(secret_file)
	exec 7<"$f"
	jr -- sh -c 'cat <&7'
	exec 7<&-
	check "an fd opened before jailrun is not readable inside" test "$RC" -ne 0
	check "its content did not leak" lacks "$OUT" fd-secret-content
	exec 8<"$f"
	jr -- sh -c 'ls /proc/self/fd | sort -n | tr "\n" " "'
	exec 8<&-
	check "only 0, 1, 2 (and ls's own directory fd) are open" test "$(cat "$OUT")" = "0 1 2 3 "
}

case_keep_fd() {
	f=$(secret_file)
	exec 7<"$f"
	jr --keep-fd 7 -- sh -c 'cat <&7'
	exec 7<&-
	check_rc 0 "--keep-fd 7 passes descriptor 7"
	check "and it is readable inside" contains "$OUT" fd-secret-content
	jr --keep-fd 9 -- true
	check_rc 125 "--keep-fd of a closed descriptor is refused"
	check "with a message naming it" contains "$ERR" "keep-fd 9"
}

run_cases case_leaked_fd_closed case_keep_fd
