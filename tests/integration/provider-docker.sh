#!/bin/sh
# The docker provider (jailrun-provider(7), DOCKER PROVIDER) against a real
# dockerd: commands, exit codes, streams and stdin, files written in the
# workspace belonging to the caller, net none without a network, a memory
# limit that kills, a time limit, --preserve, SIGTERM and --gc after
# SIGKILL; no container is left behind.  The image is built locally from
# the host's static busybox (docker-image.sh).  Skips, saying why, when no
# dockerd answers.  The nobody pass reaches the daemon through a socat
# relay only nobody can use, given with --provider-opt socket=.
. "$JR_SRCDIR/tests/integration/lib.sh"

SOCK=/var/run/docker.sock
case ${DOCKER_HOST:-} in unix://*) SOCK=${DOCKER_HOST#unix://} ;; esac
IMAGE=jailrun-busybox:test
PROV=$JR_TOP/providers
mkdir -p "$PROV"
BUILT=$(dirname "$JAILRUN")/.libs/docker.so
[ -f "$BUILT" ] && cp "$BUILT" "$PROV/"
chmod -R a+rX "$PROV"
cat >"$JR_TOP/policy/dk-mem.pol" <<'POL'
include strict.pol
limit memory 48M
POL
cat >"$JR_TOP/policy/dk-time.pol" <<'POL'
include strict.pol
limit time 2s
POL
chmod a+r "$JR_TOP/policy"/dk-*.pol

why_skip=
if [ ! -f "$PROV/docker.so" ]; then
	why_skip="docker.so was not built"
elif ! command -v docker >/dev/null || ! curl -sf --max-time 5 --unix-socket "$SOCK" http://docker/_ping >/dev/null 2>&1; then
	why_skip="no dockerd answers on $SOCK"
elif ! sh "$JR_SRCDIR/tests/integration/docker-image.sh" "$IMAGE"; then
	why_skip="cannot build the test image $IMAGE (needs busybox-static)"
fi
[ -n "$why_skip" ] && echo "# SKIP docker provider: $why_skip"
# CI starts a dockerd: there, a missing one is a failure, not a skip.
if [ -n "$why_skip" ] && [ "${JR_REQUIRE_DOCKER:-0}" = 1 ]; then
	echo "not ok 1 - docker provider: $why_skip (JR_REQUIRE_DOCKER=1)"
	echo "1..1"
	exit 1
fi

RELAY=
relay_pid=
# jailrun's containers of this test; none must outlive a case.  Those
# that were there before the test (another run's, on a shared host) are
# not this test's to count.
all_jailrun_containers() {
	docker ps -aq --no-trunc --filter label=jailrun=1 --filter "label=jailrun.policy" 2>/dev/null | sort
}
BEFORE=$JR_TOP/containers-before
all_jailrun_containers >"$BEFORE"
leftovers() {
	all_jailrun_containers | comm -23 - "$BEFORE" | wc -l
}

dk() {
	opt=
	[ -n "$RELAY" ] && opt="--provider-opt socket=$RELAY"
	# shellcheck disable=SC2086
	JR_ENV="JAILRUN_PROVIDER_PATH=$PROV" jr --provider docker --provider-opt image=$IMAGE $opt "$@"
}

dk_background() {
	opt=
	[ -n "$RELAY" ] && opt="--provider-opt socket=$RELAY"
	# shellcheck disable=SC2086
	JAILRUN_PROVIDER_PATH=$PROV jr_background --provider docker --provider-opt image=$IMAGE $opt "$@"
}

# For the nobody pass: a socket only nobody may use, relayed to dockerd.
start_relay() {
	RELAY=
	[ "$JR_MODE" = nobody ] || return 0
	RELAY=$JR_TOP/nobody-docker.sock
	rm -f "$RELAY"
	socat -t 3600 "UNIX-LISTEN:$RELAY,fork,user=$NOBODY_UID,mode=600" "UNIX-CONNECT:$SOCK" 2>/dev/null &
	relay_pid=$!
	i=0
	while [ ! -S "$RELAY" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
stop_relay() {
	[ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null && wait "$relay_pid" 2>/dev/null
	relay_pid=
}

skipping() {
	if [ -n "$why_skip" ]; then
		skip "$1" "$why_skip"
		return 0
	fi
	if [ "$JR_MODE" = nobody ] && ! command -v socat >/dev/null; then
		skip "$1" "no socat to give nobody a docker socket"
		return 0
	fi
	start_relay
	return 1
}

case_run_and_exit_codes() {
	skipping "docker: commands run" && return
	dk --policy strict -- sh -c 'echo out; echo err >&2; exit 3'
	check_rc 3 "the command's exit status comes back"
	check "its stdout on stdout" sh -c "[ \"\$(cat '$OUT')\" = out ]"
	check "its stderr on stderr" contains "$ERR" err
	check "stderr not on stdout" lacks "$OUT" err
	dk --policy strict -- true
	check_rc 0 "exit 0"
	dk --policy strict -- sh -c 'kill -9 $$'
	check_rc 137 "a command killed by SIGKILL: 137"
	dk --policy strict -- /no/such/command
	check "a missing command fails (126/127)" sh -c "[ $RC -eq 126 ] || [ $RC -eq 127 ]"
	printf 'line1\nline2\n' >"$WS/../in"
	JR_ENV="JAILRUN_PROVIDER_PATH=$PROV" jr_stdin "$WS/../in" --provider docker --provider-opt image=$IMAGE \
		${RELAY:+--provider-opt socket=$RELAY} --policy strict -- wc -l
	check "stdin is forwarded to the command" sh -c "[ \"\$(tr -d ' ' <'$OUT')\" = 2 ]"
	check "no container left" test "$(leftovers)" -eq 0
	stop_relay
}

case_confinement() {
	skipping "docker: confinement" && return
	dk --policy strict -- sh -c 'echo data >written; id -u; id -g; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; touch /etc/x 2>&1; echo root=$?'
	check_rc 0 "a command writing in the workspace runs"
	check "the file is in the host workspace" sh -c "[ \"\$(cat '$WS/written')\" = data ]"
	check "and belongs to the caller" test "$(stat -c %u:%g "$WS/written")" = "$CASE_UID:$CASE_UID"
	check "the command runs as the caller's uid" sh -c "sed -n 1p '$OUT' | grep -qx $CASE_UID"
	check "no capabilities" grep -q 'CapEff:.*0000000000000000' "$OUT"
	check "no_new_privs" grep -q 'NoNewPrivs:.*1' "$OUT"
	check "a seccomp filter" grep -q 'Seccomp:.*2' "$OUT"
	check "a read-only root filesystem" grep -q 'Read-only file system' "$OUT"
	dk --policy strict -- sh -c 'ls /sys/class/net; ping -c1 -W1 1.1.1.1 >/dev/null 2>&1; echo ping=$?; nc -w 2 1.1.1.1 80 </dev/null >/dev/null 2>&1; echo nc=$?'
	check "net none: only lo" sh -c "[ \"\$(sed -n 1p '$OUT')\" = lo ] && [ \"\$(grep -c . '$OUT')\" -eq 3 ]"
	check "net none: no route out (ping)" grep -q 'ping=[1-9]' "$OUT"
	check "net none: no route out (tcp)" grep -q 'nc=[1-9]' "$OUT"
	dk --policy strict -- sh -c 'unshare -m true 2>&1; echo rc=$?'
	check "the policy's seccomp rules hold (unshare refused)" grep -q 'rc=[1-9]' "$OUT"
	dk --policy strict -- sh -c 'touch .git 2>&1; echo rc=$?'
	check "protect: a missing protected path cannot be created" grep -q 'rc=1' "$OUT"
	check "and the placeholder docker made is gone after" test ! -e "$WS/.git"
	dk --policy default -- true
	check "net proxy (not implemented) is refused: 125" test "$RC" -eq 125
	check "saying which clause" contains "$ERR" "is not enforced by provider docker"
	check "no container left" test "$(leftovers)" -eq 0
	stop_relay
}

case_limits() {
	skipping "docker: limits" && return
	dk --policy dk-mem -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\\0" x); echo survived'
	check "limit memory: the allocation is killed (137)" test "$RC" -eq 137
	check "and did not go on" lacks "$OUT" survived
	dk --policy dk-mem -- sh -c 'echo small'
	check_rc 0 "under the memory limit a command runs"
	start=$(date +%s)
	dk --policy dk-time -- sleep 60
	took=$(($(date +%s) - start))
	check_rc 124 "limit time: exit 124"
	[ "$RC" = 125 ] && cat "$ERR"
	check "well before the command would end" test "$took" -lt 30
	check "the container is removed after a timeout" test "$(leftovers)" -eq 0
	stop_relay
}

case_lifecycle() {
	skipping "docker: lifecycle" && return
	dk --policy strict --preserve -- true
	check_rc 0 "--preserve runs"
	name=$(grep -o 'preserved container jailrun-[0-9a-f]*' "$ERR" | awk '{print $3}')
	check "--preserve prints the container" test -n "$name"
	check "and keeps it" sh -c "docker inspect '$name' >/dev/null 2>&1"
	[ -n "$name" ] && docker rm -f "$name" >/dev/null 2>&1
	dk_background --policy strict -- sleep 60
	i=0
	while [ "$(leftovers)" -eq 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.5
	kill -TERM "$JR_PID"
	wait "$JR_PID"
	check "SIGTERM ends the run" test $? -ne 0
	check "and removes the container" test "$(leftovers)" -eq 0
	dk_background --policy strict -- sleep 60
	i=0
	while [ "$(leftovers)" -eq 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$JR_PID"
	wait "$JR_PID" 2>/dev/null
	check "SIGKILL leaves a labelled container" test "$(leftovers)" -eq 1
	dk --gc
	check_rc 0 "--gc runs"
	check "--gc removes it" test "$(leftovers)" -eq 0
	stop_relay
}

run_cases case_run_and_exit_codes case_confinement case_limits case_lifecycle
