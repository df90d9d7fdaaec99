#!/bin/sh
# The pid namespace, init, signal forwarding and clean-up of the whole jail.
. "$JR_SRCDIR/tests/integration/lib.sh"

case_pid_namespace() {
	jr -- sh -c 'echo $$; ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\n" " "'
	check "the command is pid 2, init's child" test "$(head -1 "$OUT")" = 2
	# init, sh, ls and grep/sort/tr at most: nothing from the host
	check "/proc lists only the jail's processes" sh -c "[ \$(sed -n 2p '$OUT' | wc -w) -le 6 ]"
	sleep 300.$$1 </dev/null >/dev/null 2>&1 &
	host_pid=$!
	jr -- sh -c "kill -9 $host_pid"
	check "a host process cannot be signalled from inside" test "$RC" -ne 0
	check "and it is still alive" kill -0 "$host_pid"
	kill "$host_pid" 2>/dev/null
}

case_hostname() {
	jr -- hostname
	check "the default hostname is jailrun" test "$(cat "$OUT")" = jailrun
	jr --hostname build-box -- hostname
	check "--hostname sets it" test "$(cat "$OUT")" = build-box
	check "the host's hostname is unchanged" test "$(hostname)" != build-box
}

case_leftovers_killed() {
	marker=4242$$$(date +%N | cut -c1-4)
	jr -- sh -c "setsid sleep $marker </dev/null >/dev/null 2>&1 & sleep $marker.1 </dev/null >/dev/null 2>&1 & exit 3"
	check_rc 3 "the command's status is returned while daemons are running"
	check "daemons and background children are killed when the command exits" gone_within_5s "sleep $marker"
}

case_kill9_of_jailrun() {
	marker=4343$$$(date +%N | cut -c1-4)
	jr_background -- sh -c "sleep $marker & setsid sleep $marker.5 & sleep $marker.9"
	i=0
	while [ $i -lt 50 ] && [ "$(pids_with "sleep $marker" | wc -l)" -lt 3 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "the jail's processes are running" test "$(pids_with "sleep $marker" | wc -l)" -eq 3
	kill -9 "$JR_PID"
	wait "$JR_PID" 2>/dev/null
	check "kill -9 of jailrun leaves no jail process alive" gone_within_5s "sleep $marker"
}

case_signal_forwarding() {
	jr_background -- sh -c 'trap "echo got-term; exit 42" TERM; echo ready; while :; do sleep 0.05; done'
	i=0
	while [ $i -lt 50 ] && ! contains "$OUT" ready; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -TERM "$JR_PID"
	wait "$JR_PID"
	RC=$?
	check_rc 42 "SIGTERM to jailrun reaches the command, whose status is returned"
	check "the command's handler ran" contains "$OUT" got-term
}

case_orphans_reaped() {
	jr -- sh -c 'for i in 1 2 3 4 5; do (sleep 0.01 &) ; done; sleep 0.3; ps -eo stat= | grep -c Z || true'
	check "orphans are reaped by init (no zombies)" test "$(tail -1 "$OUT")" = 0
}

case_network_isolated() {
	jr -- cat /proc/net/dev
	check "only the loopback interface exists" test "$(tail -n +3 "$OUT" | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')" = "lo "
	port_file=$JR_TOP/$JR_MODE/port
	python3 -c 'import socket,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(5)
open(sys.argv[1],"w").write(str(s.getsockname()[1])); s.settimeout(8)
try:
    c,_=s.accept(); open(sys.argv[1]+".hit","w").write("hit")
except Exception: pass' "$port_file" &
	srv=$!
	i=0
	while [ ! -s "$port_file" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(cat "$port_file")
	jr -- python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=2)"
	check "a server on the host's 127.0.0.1 is unreachable" test "$RC" -ne 0
	check "and was really not reached" test ! -e "$port_file.hit"
	jr -- python3 -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1)
c=socket.create_connection(s.getsockname()); a,_=s.accept(); c.send(b"ok"); print(a.recv(2).decode())'
	check "the jail's own loopback works" test "$(cat "$OUT")" = ok
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
}

run_cases case_pid_namespace case_hostname case_leftovers_killed case_kill9_of_jailrun \
	case_signal_forwarding case_orphans_reaped case_network_isolated
