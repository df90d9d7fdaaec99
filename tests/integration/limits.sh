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

case_not_yet() {
	jr -D 'limit memory 256M' -- touch "$WS/ran"
	check_rc 125 "limits that need cgroups are refused until they are enforced"
	check "nothing ran" test ! -e "$WS/ran"
}

run_cases case_timeout case_timeout_kills_the_tree case_timeout_not_reached case_rlimits case_not_yet
