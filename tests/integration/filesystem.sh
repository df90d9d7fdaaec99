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
	jr --policy strict -- sh -c 'ls -A "$HOME"; cat "$HOME/.ssh/id_rsa"'
	check "reading ~/.ssh/id_rsa fails (strict)" test "$RC" -ne 0
	check "the key did not leak" lacks "$OUT" jailrun-test-secret
	check "home is empty" test ! -s "$OUT"
	jr --policy strict -- sh -c 'echo x > "$HOME/new" && test -f "$HOME/new" && stat -c %a "$HOME"'
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
	mkdir "$WS/scratch"
	chown "$CASE_UID" "$WS/scratch"
	jr --tmpfs "$WS/scratch" -- sh -c "echo x > $WS/scratch/f && ls $WS/scratch"
	check_rc 0 "a --tmpfs path is writable"
	check "its files do not reach the host" test ! -e "$WS/scratch/f"
	jr --tmpfs /tmp/a/b -- sh -c 'test -d /tmp/a/b'
	check_rc 0 "a missing --tmpfs path inside the jail's own tmpfs is created there"
}

case_no_host_side_effects() {
	jr --tmpfs "$WS/node_modules" -- true
	check_rc 125 "a mount point missing in the workspace is refused"
	check "saying what to do" contains "$ERR" "jailrun creates nothing on the host; create it first"
	check "and nothing was created on the host" test ! -e "$WS/node_modules"
	check "the workspace is still empty" test -z "$(ls -A "$WS")"
}

case_ro_bind_private_file() {
	# A --ro tree is the caller's own: its 0600 files stay readable, for a
	# root caller too (the bind is idmapped), while the system's are not.
	data=$JR_TOP/$JR_MODE/private-data
	mkdir -p "$data"
	echo mine >"$data/key"
	chmod 600 "$data/key"
	chown -R "$CASE_UID:$CASE_UID" "$data"
	jr --ro "$data" -- cat "$data/key"
	check "the caller's private file in an --ro tree is readable" test "$(cat "$OUT")" = mine
	jr --ro "$data" -- sh -c "chmod 644 $data/key"
	check "but its mode cannot be changed" test "$(stat -c %a "$data/key")" = 600
}

case_proc_sys_readonly() {
	jr -- sh -c 'echo evil > /proc/sys/kernel/hostname'
	check "/proc/sys is read-only" test "$RC" -ne 0
	check "the host's hostname is unchanged" test "$(hostname)" != evil
	jr -- sh -c 'echo b > /proc/sysrq-trigger'
	check "/proc/sysrq-trigger is not writable" test "$RC" -ne 0
}

case_symlink_mount_point() {
	# A path through a workspace symlink is resolved before anything is
	# mounted (like --ro/--rw): the mount lands on the link's target in
	# the jail's view, and nothing on the host changes.
	outside=$JR_TOP/$JR_MODE/outside
	mkdir -p "$outside/mnt"
	chown -R "$CASE_UID" "$outside"
	ln -s "$outside" "$WS/escape"
	jr --tmpfs "$WS/escape/mnt" -- sh -c "echo x > $outside/mnt/f && echo y > $WS/escape/mnt/g && ls $outside/mnt | tr '\n' ' '"
	check_rc 0 "a --tmpfs path through a symlink is mounted on its target"
	check "both paths reach the same tmpfs" test "$(cat "$OUT")" = "f g "
	check "nothing was written on the host" test -z "$(ls -A "$outside/mnt")"
}

case_symlink_to_secret() {
	ln -s "$FIXHOME/.ssh/id_rsa" "$WS/key-link"
	jr -- cat key-link
	check "a workspace symlink to the hidden key does not read it" lacks "$OUT" jailrun-test-secret
}

case_planted_symlink_not_followed() {
	# An earlier jail plants a link in the workspace; a later --ro of that
	# name must not show what the link points at.
	secret_dir=$JR_TOP/$JR_MODE/private
	mkdir -p "$secret_dir"
	echo private-data >"$secret_dir/file"
	chown -R "$CASE_UID" "$secret_dir"
	jr -- ln -s "$secret_dir" cache
	jr --ro ./cache -- cat "$secret_dir/file"
	check_rc 125 "--ro of a symlink planted in the workspace is refused"
	check "saying why" contains "$ERR" "leads elsewhere; jailrun does not follow those"
	check "nothing leaked" lacks "$OUT" private-data
	jr --ro /proc -- true
	check "the host's /proc is never bound in" sh -c "[ $RC -eq 125 ] && grep -q 'not bound in' '$ERR'"
}

run_cases case_planted_symlink_not_followed case_workspace_writable case_system_readonly case_tmp_is_private \
	case_host_dirs_absent case_home_is_empty case_shadow_unreadable case_ro_bind \
	case_rw_bind case_tmpfs_option case_no_host_side_effects case_ro_bind_private_file case_proc_sys_readonly case_symlink_mount_point \
	case_symlink_to_secret
