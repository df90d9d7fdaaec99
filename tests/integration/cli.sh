#!/bin/sh
# Command-line handling: precise errors, nothing run, nothing changed.
. "$JR_SRCDIR/tests/integration/lib.sh"

# Runs a bad invocation: it must exit 125 with MESSAGE, run nothing and
# leave the workspace untouched.
refused() {
	message=$1
	shift
	jr "$@" -- touch "$WS/ran"
	check "jailrun $* is refused with 125" test "$RC" -eq 125
	check "jailrun $* says: $message" contains "$ERR" "$message"
	check "jailrun $* ran nothing" test ! -e "$WS/ran"
}

case_bad_flags() {
	refused "unrecognized option" --bogus
	refused "not a descriptor number" --keep-fd abc
	refused "descriptors 0-2 are always passed" --keep-fd 1
	refused "hostname 'bad name'" --hostname "bad name"
	refused "workspace /nonexistent-ws: No such file or directory" --workspace /nonexistent-ws
	refused "binding the host's whole root is not allowed" --ro /
	refused "tmpfs /: the jail's root is already a fresh tmpfs" --tmpfs /
	jr --workspace /etc/hostname -- true
	check_rc 125 "a workspace that is a file is refused"
	check "workspace left empty by refused runs" test -z "$(ls -A "$WS")"
}

case_no_command() {
	jr
	check_rc 125 "no command is an error"
	check "saying so" contains "$ERR" "no command given"
}

case_help_version() {
	jr --help
	check_rc 0 "--help exits 0"
	check "--help shows the usage" contains "$OUT" "Usage: jailrun"
	jr --version
	check "--version prints the version" sh -c "grep -E '^jailrun [0-9]+\.[0-9]+\.[0-9]+$' '$OUT' >/dev/null"
}

case_command_flags_not_ours() {
	jr -- echo --ro --bogus
	check "flags after the command belong to it" test "$(cat "$OUT")" = "--ro --bogus"
	jr echo -v
	check "the first non-option starts the command" test "$(cat "$OUT")" = "-v"
}

case_verbose() {
	jr -v -- true
	check_rc 0 "-v runs the command"
	check "-v shows the mounts" contains "$ERR" "  /usr <- /usr (ro bind"
	check "-v shows the setup steps with timings" contains "$ERR" "init: mounts and pivot_root"
}

case_workspace_flag() {
	other=$JR_TOP/$JR_MODE/other-ws
	mkdir -p "$other"
	chown "$CASE_UID" "$other"
	jr -w "$other" -- sh -c 'pwd; echo x > f'
	check "-w sets the working directory" test "$(cat "$OUT")" = "$other"
	check "and the writable tree" test -f "$other/f"
	check "the current directory is then not shown" test ! -e "$WS/f"
}

case_doctor() {
	jr --doctor
	check_rc 0 "--doctor exits 0 where the full jail works"
	check "it tried user namespaces" contains "$OUT" "user namespaces      ok"
	check "and reports the Landlock ABI" sh -c "grep -q 'Landlock             ok: ABI [1-9]' '$OUT'"
	# Inside a strict jail its seccomp filter refuses new namespaces: the
	# doctor must notice, say why, and exit 1.
	cp "$JR_BIN" "$WS/jailrun-inner"
	chown "$CASE_UID" "$WS/jailrun-inner"
	# (An ASan build's LeakSanitizer needs ptrace, which strict refuses.)
	jr --policy strict -- env ASAN_OPTIONS=detect_leaks=0 ./jailrun-inner --doctor
	check_rc 1 "--doctor exits 1 where namespaces cannot be made"
	check "naming the failure" contains "$OUT" "user namespaces      FAILED: unshare: Operation not permitted"
	check "and the verdict" contains "$OUT" "the full jail does NOT work here"
}

run_cases case_doctor case_bad_flags case_no_command case_help_version case_command_flags_not_ours \
	case_verbose case_workspace_flag
