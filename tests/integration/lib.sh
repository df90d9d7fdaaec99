# TAP harness for jailrun's integration tests.
#
# A test file defines its cases as shell functions named case_*, sources
# this file and calls `run_cases`.  Every case runs twice: as root and as
# the unprivileged user nobody (setpriv --reuid=65534 --regid=65534
# --clear-groups).  The binary under test is copied into a world-readable
# temporary directory, because the build tree may sit where nobody cannot
# reach it.  Each run gets a fresh workspace and a fixture HOME holding a
# fake SSH key, both owned by the user the case runs as.
#
# Inside a case:
#   jr [JAILRUN-ARGS]        run jailrun; sets RC, and $OUT/$ERR name files
#                            with its stdout/stderr; stdin is /dev/null;
#                            JR_ENV="A=1 B=2" adds to the caller's environment
#   jr_stdin FILE [ARGS]     the same with stdin from FILE
#   as_user CMD...           run CMD as the case's user (for host-side checks)
#   check DESC CMD...        one TAP point: passes when CMD succeeds
#   check_rc N DESC          one TAP point: passes when RC == N
#   contains FILE TEXT / lacks FILE TEXT     grep -F helpers for check
#   skip DESC REASON         one skipped TAP point
set -u

: "${JAILRUN:?JAILRUN must name the jailrun binary under test}"
JR_SRCDIR=${JR_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
NOBODY_UID=65534
# System tools only: a per-user PATH (pyenv shims under /root, say) is
# not reachable for nobody, nor inside the jail.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

_tap_n=0
_tap_failed=0
JR_TOP=$(mktemp -d /tmp/jailrun-test.XXXXXX)
chmod 755 "$JR_TOP"
cp "$JAILRUN" "$JR_TOP/jailrun"
chmod 755 "$JR_TOP/jailrun"
JR_BIN=$JR_TOP/jailrun
# The shipped policies, where nobody can read them too.
cp -r "$JR_SRCDIR/policy" "$JR_TOP/policy"
chmod -R a+rX "$JR_TOP/policy"
JAILRUN_POLICY_PATH=$JR_TOP/policy
export JAILRUN_POLICY_PATH
trap 'rm -rf "$JR_TOP"' EXIT

_tap() {
	_tap_n=$((_tap_n + 1))
	echo "$1 $_tap_n - [$JR_MODE] $2"
}

check() {
	desc=$1
	shift
	if "$@"; then
		_tap ok "$desc"
	else
		_tap "not ok" "$desc"
		_tap_failed=$((_tap_failed + 1))
		echo "#   failed: $*"
		echo "#   jailrun exit status: ${RC:-none}"
		[ -s "${OUT:-/dev/null}" ] && sed 's/^/#   stdout: /' "$OUT" | head -20
		[ -s "${ERR:-/dev/null}" ] && sed 's/^/#   stderr: /' "$ERR" | head -20
	fi
	return 0
}

check_rc() {
	check "$2" test "$RC" -eq "$1"
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - [$JR_MODE] $1 # SKIP $2"
}

contains() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }

as_user() {
	if [ "$JR_MODE" = root ]; then
		"$@"
	else
		setpriv --reuid=$NOBODY_UID --regid=$NOBODY_UID --clear-groups -- "$@"
	fi
}

jr_stdin() {
	input=$1
	shift
	# shellcheck disable=SC2086 # JR_ENV: NAME=VALUE words for the caller's environment
	(cd "$WS" && as_user env HOME="$FIXHOME" ${JR_ENV:-} "$JR_BIN" "$@") <"$input" >"$OUT" 2>"$ERR"
	RC=$?
}

jr() {
	jr_stdin /dev/null "$@"
}

# Starts jailrun in the background (stdout/stderr to $OUT/$ERR); JR_PID is
# the pid of jailrun itself (setpriv execs it).
jr_background() {
	(
		cd "$WS" || exit 1
		export HOME="$FIXHOME"
		if [ "$JR_MODE" = nobody ]; then
			exec setpriv --reuid=$NOBODY_UID --regid=$NOBODY_UID --clear-groups -- "$JR_BIN" "$@"
		fi
		exec "$JR_BIN" "$@"
	) </dev/null >"$OUT" 2>"$ERR" &
	JR_PID=$!
}

# Pids of host processes whose command line starts with TEXT.
pids_with() {
	for d in /proc/[0-9]*; do
		cmd=$( { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null)
		case $cmd in "$1"*) echo "${d#/proc/}" ;; esac
	done
	return 0
}

# Waits up to 5 s for no host process to match TEXT.
gone_within_5s() {
	i=0
	while [ $i -lt 50 ]; do
		[ -z "$(pids_with "$1")" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

_setup_case_dirs() {
	base=$JR_TOP/$JR_MODE/$1
	WS=$base/ws
	FIXHOME=$base/home
	OUT=$base/out
	ERR=$base/err
	mkdir -p "$WS" "$FIXHOME/.ssh"
	echo "-----BEGIN FIXTURE KEY----- jailrun-test-secret" >"$FIXHOME/.ssh/id_rsa"
	chmod 700 "$FIXHOME/.ssh"
	chmod 600 "$FIXHOME/.ssh/id_rsa"
	chmod 755 "$base"
	chown -R "$CASE_UID:$CASE_UID" "$base"
	RC=
}

run_cases() {
	modes=root
	if [ "$(id -u)" -eq 0 ]; then
		modes="root nobody"
	else
		echo "# not root: running as $(id -un) only; the nobody pass needs root"
		modes=self
	fi
	for JR_MODE in $modes; do
		case $JR_MODE in
		root) CASE_UID=0 ;;
		nobody) CASE_UID=$NOBODY_UID ;;
		self) CASE_UID=$(id -u) ;;
		esac
		[ "$JR_MODE" = self ] && JR_MODE=root # as_user runs directly
		for c in "$@"; do
			_setup_case_dirs "$c"
			"$c"
		done
	done
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}
