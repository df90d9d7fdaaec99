#!/bin/sh
# Limits this version enforces: the wall clock (kept outside the jail) and
# the per-process rlimits.  memory, pids, cpu and output come with cgroups.
. "$JR_SRCDIR/tests/integration/lib.sh"

elapsed_ms() { echo $(( $(date +%s%3N) - $1 )); }

case_timeout() {
	start=$(date +%s%3N)
	jr --timeout 1 -- sleep 1000
	took=$(elapsed_ms "$start")
	check_rc 124 "sleep 1000 under --timeout 1 exits 124"
	check "within the grace period (took ${took} ms)" test "$took" -lt 3500
}

case_timeout_kills_the_tree() {
	marker=6161$$$(date +%N | cut -c1-4)
	jr --timeout 0.5 --kill-after 0.5 -- sh -c "trap '' TERM
		(trap '' TERM; setsid sleep $marker.1 </dev/null >/dev/null 2>&1 &)
		(trap '' TERM; sleep $marker.2 </dev/null >/dev/null 2>&1 &)
		sleep $marker.3"
	check_rc 124 "a tree that ignores SIGTERM still ends with 124"
	check "nothing of it is alive afterwards: not the command, its daemons, double-forked children" \
		gone_within_5s "sleep $marker"
	if [ "$JR_MODE" = nobody ]; then
		marker=6262$$$(date +%N | cut -c1-4)
		jr --isolation landlock -D 'landlock best-effort' --timeout 0.5 --kill-after 0.5 -- sh -c "trap '' TERM
			(trap '' TERM; setsid sleep $marker.1 </dev/null >/dev/null 2>&1 &)
			sleep $marker.3"
		check_rc 124 "also without namespaces (isolation landlock)"
		check "and nothing is left there either" gone_within_5s "sleep $marker"
	fi
}

case_timeout_not_reached() {
	jr --timeout 5 -- sh -c 'exit 3'
	check_rc 3 "a command that ends in time keeps its own status"
}

case_rlimits() {
	jr -D 'limit nofile 100' -- sh -c 'ulimit -n; ulimit -Hn; ulimit -c'
	check "limit nofile sets the soft and hard limit" test "$(head -2 "$OUT" | tr '\n' ' ')" = "100 100 "
	check "no core file unless asked" test "$(sed -n 3p "$OUT")" = 0
	jr -D 'limit fsize 1M' -- sh -c 'head -c 2M /dev/zero > big'
	check "limit fsize stops a file at the limit" test "$(stat -c %s "$WS/big")" -eq 1048576
	check "with SIGXFSZ" test "$RC" -eq 153
}

case_memory() {
	jr --policy strict -D 'limit memory 256M' -- python3 -c 'x = bytearray(2 * 1024**3); print("allocated")'
	check "a 2 GiB allocation under limit memory 256M does not happen" lacks "$OUT" allocated
	if [ "$JR_MODE" = root ]; then
		check_rc 137 "as root (a cgroup of the run's own) the OOM killer ends it"
		check "and jailrun reports it as an OOM kill" contains "$ERR" "the memory limit was reached"
		check "the run's cgroups are removed" sh -c "! find /sys/fs/cgroup/memory /sys/fs/cgroup/pids -maxdepth 3 -name 'jailrun-[0-9]*' | grep -q ."
		# A jailrun killed with SIGKILL leaves its groups; the next run
		# with limits removes those whose jailrun is gone.
		# (Beneath the caller's own group, where its runs' groups go.)
		own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
		[ "$own" = / ] && own=
		dead=$(sh -c 'echo $$')
		mkdir -p "/sys/fs/cgroup/memory$own/jailrun-$dead"
		jr -D 'limit memory 1G' -- true
		check "a killed run's leftover cgroup is removed by the next" test ! -d "/sys/fs/cgroup/memory$own/jailrun-$dead"
		# The run's group sits beneath the caller's: the caller's own
		# memory limit holds for the jail, whatever the policy asks.
		cg=/sys/fs/cgroup/memory$own/jailrun-test-$$
		mkdir "$cg"
		echo $((64 << 20)) >"$cg/memory.limit_in_bytes"
		(echo $$ >/dev/null; sh -c 'echo $$ > '"$cg"'/cgroup.procs; exec "$@"' sh \
			"$JR_BIN" -D 'limit memory 1G' -- python3 -c 'b = b"x" * (200 << 20); print("allocated")') \
			</dev/null >"$OUT" 2>"$ERR"
		RC=$?
		rmdir "$cg"/jailrun-* 2>/dev/null
		rmdir "$cg"
		check "a caller limited to 64M cannot get more through limit memory 1G" lacks "$OUT" allocated
	else
		check "unprivileged (RLIMIT_AS) the allocation fails" contains "$ERR" MemoryError
	fi
}

case_fork_bomb() {
	jr -D 'limit pids 64' --timeout 3 -- bash -c 'bomb() { bomb | bomb & }; bomb; sleep 10'
	check_rc 124 "a fork bomb under limit pids 64 is contained until the time limit ends it"
	check "the host is still responsive, and nothing of the bomb is left" gone_within_5s "bash -c bomb"
	jr -D 'limit pids 64' -- sh -c 'for i in $(seq 100); do sleep 2 & done'
	check "the 65th process cannot be made" contains "$ERR" "fork"
}

# limit output: the first SIZE bytes of stdout+stderr pass, then a marker;
# the rest is drained, so a command writing far more still finishes.
case_output_limit() {
	jr --output-limit 1K -- sh -c 'head -c 10000000 /dev/zero | tr "\0" x; echo done > finished'
	check_rc 0 "a command writing 10 MB under --output-limit 1K runs to its end"
	check "and really finished (was not blocked or killed)" test -s "$WS/finished"
	check "exactly 1024 bytes of its output passed" test "$(head -c 1024 "$OUT" | tr -d x | wc -c)" -eq 0
	check "followed by the truncation marker" contains "$OUT" "[jailrun: output truncated at 1024 bytes (limit output)]"
	check "and nothing after it" test "$(wc -c < "$OUT")" -le 1100
	jr -D 'limit output 1M' -- sh -c 'echo out; echo err >&2'
	check "output under the limit passes untouched" sh -c "[ \"\$(cat '$OUT')\" = out ] && [ \"\$(cat '$ERR')\" = err ]"
	check "with no marker" lacks "$OUT" "truncated"
	# stdout and stderr sharing one file keep their order through one pipe
	(cd "$WS" && as_user env HOME="$FIXHOME" "$JR_BIN" --output-limit 1M -- \
		sh -c 'for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done') </dev/null >"$OUT" 2>&1
	check "2>&1 keeps stdout and stderr interleaved in order" test "$(tr -d '\n' < "$OUT")" = "o1e1o2e2o3e3o4e4o5e5"
	# Past the cap nothing is written, yet a reader that goes away must
	# still end the command (EPIPE), not leave it running.
	start=$(date +%s)
	(cd "$WS" && as_user env HOME="$FIXHOME" timeout 20 "$JR_BIN" --output-limit 1k -- yes) </dev/null 2>/dev/null | head -1 >/dev/null
	check "a capped command whose reader has gone ends at once" test $(($(date +%s) - start)) -lt 5
	# A stdin open for writing is no way around the cap.
	echo keep > "$WS/rw.txt"
	chown "$CASE_UID" "$WS/rw.txt"
	(cd "$WS" && as_user env HOME="$FIXHOME" "$JR_BIN" --output-limit 16 -- \
		sh -c 'head -c 100000 /dev/zero >&0') 0<>"$WS/rw.txt" >/dev/null 2>&1
	check "writing to a read-write stdin is not a way around limit output" test "$(wc -c < "$WS/rw.txt")" -le 16
}

case_not_yet() {
	jr -D 'limit cpu 1' -- true
	if [ "$JR_MODE" = root ]; then
		check_rc 0 "limit cpu works as root (a cgroup's cfs quota)"
	else
		check_rc 125 "limit cpu is refused without a cgroup (no rlimit means a share of cores)"
	fi
}

run_cases case_timeout case_timeout_kills_the_tree case_timeout_not_reached case_rlimits case_memory \
	case_fork_bomb case_output_limit case_not_yet
