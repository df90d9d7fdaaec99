#!/bin/sh
# The filesystem view: what the jail can read, write, and not see at all.
. "$JR_SRCDIR/tests/integration/lib.sh"

case_workspace_writable() {
	jr -- sh -c 'echo hello > made-inside && mkdir -p sub/dir && echo x > sub/dir/f'
	check_rc 0 "writing in the workspace succeeds"
	check "the file is on the host" test "$(cat "$WS/made-inside" 2>/dev/null)" = hello
	check "it belongs to the caller on the host" test "$(stat -c %u:%g "$WS/made-inside")" = "$CASE_UID:$CASE_UID"
	check "new directories too" test "$(stat -c %u "$WS/sub/dir")" = "$CASE_UID"
	jr -- pwd
	check "the working directory is the workspace" test "$(cat "$OUT")" = "$WS"
}

case_system_readonly() {
	marker=jailrun-test-$$-$JR_MODE
	for target in /etc /usr /usr/bin /opt /; do
		jr -- sh -c "echo x > $target/$marker"
		check "writing to $target fails" test "$RC" -ne 0
		check "and nothing appeared in the host's $target" test ! -e "$target/$marker"
	done
	jr -- sh -c "mkdir /$marker"
	check "creating a directory in the jail's root fails" test "$RC" -ne 0
}

case_tmp_is_private() {
	marker=/tmp/jailrun-test-private-$$-$JR_MODE
	jr -- sh -c "echo x > $marker && test -f $marker"
	check_rc 0 "/tmp is writable inside"
	check "but the file is not in the host's /tmp" test ! -e "$marker"
	echo host-only >"$JR_TOP/host-visible-file"
	chmod 644 "$JR_TOP/host-visible-file"
	jr -- cat "$JR_TOP/host-visible-file"
	check "a world-readable host file in /tmp is not visible" test "$RC" -ne 0
	check "its content did not leak" lacks "$OUT" host-only
}

case_host_dirs_absent() {
	jr -- sh -c 'for d in /root /home /var /srv /mnt /media /boot /sys /run; do [ -e "$d" ] && echo "present $d"; done; true'
	check "no host directory beyond the system binds is present" test ! -s "$OUT"
}

case_home_is_empty() {
	jr -- sh -c 'ls -A "$HOME"; cat "$HOME/.ssh/id_rsa"'
	check "reading ~/.ssh/id_rsa fails" test "$RC" -ne 0
	check "the key did not leak" lacks "$OUT" jailrun-test-secret
	check "home is empty" test ! -s "$OUT"
	jr -- sh -c 'echo x > "$HOME/new" && test -f "$HOME/new" && stat -c %a "$HOME"'
	check "home is a writable private directory (0700)" test "$(cat "$OUT")" = 700
	check "writes to home stay in the jail" test ! -e "$FIXHOME/new"
	check "the fixture key is untouched on the host" contains "$FIXHOME/.ssh/id_rsa" jailrun-test-secret
}

case_shadow_unreadable() {
	jr -- cat /etc/shadow
	check "/etc/shadow is unreadable inside (root is not the host's root)" test "$RC" -ne 0
}

case_ro_bind() {
	data=$JR_TOP/$JR_MODE/ro-data
	mkdir -p "$data"
	echo readable >"$data/file"
	chown -R "$CASE_UID" "$data"
	jr --ro "$data" -- cat "$data/file"
	check "an --ro path is readable" test "$(cat "$OUT")" = readable
	jr --ro "$data" -- sh -c "echo x > $data/file; echo y > $data/new"
	check "but not writable" test "$RC" -ne 0
	check "the host file is unchanged" test "$(cat "$data/file")" = readable
	check "no file was created on the host" test ! -e "$data/new"
}

case_rw_bind() {
	data=$JR_TOP/$JR_MODE/rw-data
	mkdir -p "$data"
	chown "$CASE_UID:$CASE_UID" "$data"
	jr --rw "$data" -- sh -c "echo written > $data/out"
	check_rc 0 "an --rw path is writable"
	check "the write reached the host" test "$(cat "$data/out" 2>/dev/null)" = written
	check "with the caller's ownership" test "$(stat -c %u "$data/out")" = "$CASE_UID"
}

case_tmpfs_option() {
	jr --tmpfs "$WS/scratch" -- sh -c "echo x > $WS/scratch/f && ls $WS/scratch"
	check_rc 0 "a --tmpfs path is writable"
	check "its files do not reach the host" test ! -e "$WS/scratch/f"
}

case_proc_sys_readonly() {
	jr -- sh -c 'echo evil > /proc/sys/kernel/hostname'
	check "/proc/sys is read-only" test "$RC" -ne 0
	check "the host's hostname is unchanged" test "$(hostname)" != evil
	jr -- sh -c 'echo b > /proc/sysrq-trigger'
	check "/proc/sysrq-trigger is not writable" test "$RC" -ne 0
}

case_symlink_mount_point() {
	# A symlink in the workspace must not steer a mount point to the host.
	outside=$JR_TOP/$JR_MODE/outside
	mkdir -p "$outside"
	chown "$CASE_UID" "$outside"
	ln -s "$outside" "$WS/escape"
	jr --tmpfs "$WS/escape/mnt" -- true
	check_rc 125 "a mount point through a workspace symlink is refused"
	check "the error says why" contains "$ERR" "refusing to follow the symlink"
	check "nothing was created outside" test ! -e "$outside/mnt"
}

case_symlink_to_secret() {
	ln -s "$FIXHOME/.ssh/id_rsa" "$WS/key-link"
	jr -- cat key-link
	check "a workspace symlink to the hidden key does not read it" lacks "$OUT" jailrun-test-secret
}

run_cases case_workspace_writable case_system_readonly case_tmp_is_private \
	case_host_dirs_absent case_home_is_empty case_shadow_unreadable case_ro_bind \
	case_rw_bind case_tmpfs_option case_proc_sys_readonly case_symlink_mount_point \
	case_symlink_to_secret
