#!/bin/sh
# The kernel CIDR filter: net host with allow cidr, enforced by cgroup BPF
# programs (jailrun --with-libbpf, run as root).  Two network namespaces
# of the test's own, joined by a veth pair, stand for the host's network
# and the outside: the jail runs in namespace A (10.213.0.1, fd00:213::1),
# servers listen in namespace B on two addresses each (10.213.0.2 and .3,
# fd00:213::2 and ::3).  No address outside them is ever used.  As nobody
# the same policy is refused (exit 125): the filter needs root.
. "$JR_SRCDIR/tests/integration/lib.sh"

NS_A=jrbpf-a-$$
NS_B=jrbpf-b-$$
SRV_LOG=$JR_TOP/servers.log
SRV_PID=

cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$JR_TOP"
}

# Not `ip netns exec`: it mounts a /sys of its own, without the cgroup2
# mount the filter attaches to.  nsenter changes the network alone.
in_ns() {
	ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# Why the test cannot run here (empty when it can).
why_not() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces, the filter itself)"; return; }
	for tool in ip nsenter python3; do
		command -v $tool >/dev/null || { echo "$tool is not installed"; return; }
	done
	"$JR_BIN" --doctor | grep -q 'kernel CIDR filter.*built without libbpf' &&
		echo "jailrun was built without libbpf (configure --with-libbpf)"
}

setup_network() {
	ip netns add "$NS_A" && ip netns add "$NS_B" &&
		ip link add jrb$$a netns "$NS_A" type veth peer name jrb$$b netns "$NS_B" &&
		ip -n "$NS_A" addr add 10.213.0.1/24 dev jrb$$a &&
		ip -n "$NS_A" addr add fd00:213::1/64 dev jrb$$a nodad &&
		ip -n "$NS_B" addr add 10.213.0.2/24 dev jrb$$b &&
		ip -n "$NS_B" addr add 10.213.0.3/24 dev jrb$$b &&
		ip -n "$NS_B" addr add fd00:213::2/64 dev jrb$$b nodad &&
		ip -n "$NS_B" addr add fd00:213::3/64 dev jrb$$b nodad &&
		ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up &&
		ip -n "$NS_A" link set jrb$$a up && ip -n "$NS_B" link set jrb$$b up &&
		# ICMP echo sockets for everyone in A, as many hosts allow them:
		# the filter must refuse them, since no hook sees their destinations.
		in_ns "$NS_A" sysctl -q -w net.ipv4.ping_group_range="0 2147483647"
}

# TCP servers answer "server ADDR PORT" and log each connection; a UDP
# server logs each datagram.  They stop by themselves after 5 minutes.
start_servers() {
	# Not through in_ns (a function: the background job would be a
	# subshell, and killing it would leave python holding the TAP pipe).
	nsenter --net="/run/netns/$NS_B" python3 - "$SRV_LOG" <<'PYEOF' >/dev/null 2>&1 &
import os, socket, sys, threading
log = open(sys.argv[1], "a", buffering=1)
def tcp(host, port):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port)); s.listen(16)
    def serve():
        while True:
            c, _ = s.accept()
            log.write("tcp %s %d\n" % (host, port))
            c.sendall(b"server %s %d\n" % (host.encode(), port)); c.close()
    threading.Thread(target=serve, daemon=True).start()
def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((host, port))
    def serve():
        while True:
            s.recv(64); log.write("udp %s %d\n" % (host, port))
    threading.Thread(target=serve, daemon=True).start()
for host in ("10.213.0.2", "10.213.0.3", "fd00:213::2", "fd00:213::3"):
    tcp(host, 8080)
tcp("10.213.0.2", 8081)
udp("10.213.0.2", 9999); udp("10.213.0.3", 9999)
log.write("ready\n")
threading.Event().wait(300)
PYEOF
	SRV_PID=$!
	i=0
	while ! grep -q ready "$SRV_LOG" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	grep -q ready "$SRV_LOG"
}

# jailrun in namespace A, as the case's user; sets RC, $OUT, $ERR.
jr_a() {
	: >"$SRV_LOG"
	if [ "$JR_MODE" = nobody ]; then
		set -- setpriv --reuid="$NOBODY_UID" --regid="$NOBODY_UID" --clear-groups -- "$JR_BIN" "$@"
	else
		set -- "$JR_BIN" "$@"
	fi
	(cd "$WS" && in_ns "$NS_A" env HOME="$FIXHOME" "$@") </dev/null >"$OUT" 2>"$ERR"
	RC=$?
}

# Run in the jail with targets KIND:HOST:PORT (tcp; udp: sendto; udpc:
# connect and send; udplite: the same over UDP-Lite; mapped: TCP from an
# IPv6 socket to ::ffff:HOST; tfo: TCP Fast Open through sendto; icmp: an
# echo request); prints "TARGET reached ANSWER", "TARGET sent" or
# "TARGET refused ERRNO" for each.
PROBE='
import socket, sys
for t in sys.argv[1:]:
    kind, rest = t.split(":", 1)
    host, port = rest.rsplit(":", 1)
    host, port = host.strip("[]"), int(port)
    family = socket.AF_INET6 if ":" in host or kind == "mapped" else socket.AF_INET
    if kind == "mapped":
        host = "::ffff:" + host
    try:
        if kind in ("udp", "udpc", "udplite"):
            s = socket.socket(family, socket.SOCK_DGRAM, 136 if kind == "udplite" else 0)
            if kind == "udp":
                s.sendto(b"jail", (host, port))
            else:
                s.connect((host, port))
                s.send(b"jail")
            print(t, "sent")
            continue
        if kind == "icmp":
            s = socket.socket(family, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
            s.settimeout(3)
            s.sendto(b"\x08\0\0\0\0\1\0\1jailrun", (host, 0))
            s.recvfrom(64)
            print(t, "reached echo")
            continue
        s = socket.socket(family)
        if kind == "tfo":  # blocking: a timeout makes the socket non-blocking
            s.sendto(b"x", socket.MSG_FASTOPEN, (host, port))
        s.settimeout(3)
        if kind != "tfo":
            s.connect((host, port))
        print(t, "reached", s.recv(64).decode().strip())
    except OSError as e:
        print(t, "refused", e.errno)'

saw() { grep -qx -- "$1" "$SRV_LOG"; }
# A datagram takes a moment to arrive.
saw_within_2s() {
	i=0
	while ! saw "$1" && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
	saw "$1"
}

# The directory the run's cgroups go beneath: the caller's own v2 group.
cgroup_parent() {
	mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
	own=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
	[ "$own" = / ] && own=
	echo "$mnt$own"
}

no_run_groups() { ! ls -d "$(cgroup_parent)"/jailrun-* >/dev/null 2>&1; }

ALL='tcp:10.213.0.2:8080 tcp:10.213.0.3:8080 tcp:[fd00:213::2]:8080 tcp:[fd00:213::3]:8080
udp:10.213.0.2:9999 udp:10.213.0.3:9999 udpc:10.213.0.3:9999 mapped:10.213.0.2:8080
mapped:10.213.0.3:8080 tfo:10.213.0.3:8080 icmp:10.213.0.3:0 udplite:10.213.0.3:9999'

# Without allow cidr every address is reachable from namespace A: what the
# filter refuses below, it refuses because of the rules.
case_without_rules() {
	# shellcheck disable=SC2086 # ALL: one word per target
	jr_a --policy strict --net host -- python3 -c "$PROBE" $ALL
	check_rc 0 "net host without allow cidr runs"
	for t in tcp:10.213.0.2:8080 tcp:10.213.0.3:8080 "tcp:[fd00:213::3]:8080" mapped:10.213.0.3:8080 \
		tfo:10.213.0.3:8080; do
		check "without rules, $t is reached" contains "$OUT" "$t reached server"
	done
	check "without rules, UDP to 10.213.0.3 arrives" saw_within_2s "udp 10.213.0.3 9999"
	check "without rules, UDP through connect and send is sent" contains "$OUT" "udpc:10.213.0.3:9999 sent"
	check "without rules, UDP-Lite is sent" contains "$OUT" "udplite:10.213.0.3:9999 sent"
	check "without rules, ICMP echo to 10.213.0.3 is answered" contains "$OUT" "icmp:10.213.0.3:0 reached echo"
}

case_allow_cidr() {
	if [ "$JR_MODE" = nobody ]; then
		jr_a --policy strict --net host -D 'allow cidr 10.213.0.2/32' -- touch "$WS/ran"
		check_rc 125 "as nobody, net host with allow cidr is refused (exit 125)"
		check "saying why, in one line" sh -c "test \"\$(wc -l < '$ERR')\" -eq 1 &&
			grep -q 'allow cidr 10.213.0.2/32.*needs CAP_BPF and CAP_NET_ADMIN' '$ERR'"
		check "nothing ran" test ! -e "$WS/ran"
		return 0
	fi
	R=$(dirname "$WS")/report.json
	# shellcheck disable=SC2086 # ALL: one word per target
	jr_a --policy strict --net host -D 'allow cidr 10.213.0.2/32 fd00:213::2/128' --report "$R" \
		-- python3 -c "$PROBE" $ALL
	check_rc 0 "net host with allow cidr runs as root"
	check "the allowed IPv4 address is reached (the server answers)" \
		contains "$OUT" "tcp:10.213.0.2:8080 reached server 10.213.0.2 8080"
	check "another address of the same host is refused with EPERM" \
		contains "$OUT" "tcp:10.213.0.3:8080 refused 1"
	check "(its server saw no connection)" sh -c "! grep -q '10.213.0.3' '$SRV_LOG'"
	check "the allowed IPv6 address is reached" \
		contains "$OUT" "tcp:[fd00:213::2]:8080 reached server fd00:213::2 8080"
	check "another IPv6 address is refused" contains "$OUT" "tcp:[fd00:213::3]:8080 refused 1"
	check "(its server saw no connection)" sh -c "! grep -q 'fd00:213::3' '$SRV_LOG'"
	check "UDP to the allowed address is sent" saw_within_2s "udp 10.213.0.2 9999"
	check "UDP sendto another address fails with EPERM" contains "$OUT" "udp:10.213.0.3:9999 refused 1"
	check "so does UDP connect to it" contains "$OUT" "udpc:10.213.0.3:9999 refused 1"
	check "(its server got no datagram)" sh -c "! grep -q 'udp 10.213.0.3' '$SRV_LOG'"
	check "UDP-Lite sockets are refused (their connect passes no hook)" \
		contains "$OUT" "udplite:10.213.0.3:9999 refused 1"
	check "::ffff:10.213.0.2 from an IPv6 socket is the allowed IPv4 address" \
		contains "$OUT" "mapped:10.213.0.2:8080 reached server 10.213.0.2 8080"
	check "::ffff:10.213.0.3 from an IPv6 socket is refused" \
		contains "$OUT" "mapped:10.213.0.3:8080 refused 1"
	check "TCP Fast Open (sendto) to another address is refused" \
		contains "$OUT" "tfo:10.213.0.3:8080 refused 1"
	check "ICMP echo sockets are refused (no hook sees where they send)" \
		contains "$OUT" "icmp:10.213.0.3:0 refused 1"
	check "--report lists the refusals under denials.network" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
net = {(d["host"], d["port"]): d for d in r["denials"]["network"]}
for key in (("10.213.0.3", 8080), ("fd00:213::3", 8080), ("10.213.0.3", 9999)):
    assert key in net, (key, net)
    assert net[key]["rule"] == "no allow cidr covers it" and net[key]["count"] >= 1, net[key]
assert ("10.213.0.2", 8080) not in net, net' "$R"
	check "the run's cgroup is removed afterwards" no_run_groups
	jr_a --policy strict --net host -D 'allow cidr 10.213.0.2/32' -- cat /proc/self/cgroup
	check "the jail runs in a cgroup of the run's own" grep -q '^0::/jailrun-[0-9]*-[0-9]*$' "$OUT"
}

# A rule with a port allows that port only; a policy file says the same
# as -D (and as nobody is refused at its file:line).
case_port_rule() {
	pol=$(dirname "$WS")/cidr.pol
	printf 'include strict.pol\nnet host\nallow cidr 10.213.0.2/32:8080\n' >"$pol"
	chmod a+r "$pol"
	jr_a --policy "$pol" -- python3 -c "$PROBE" tcp:10.213.0.2:8080 tcp:10.213.0.2:8081 \
		udp:10.213.0.2:9999
	if [ "$JR_MODE" = nobody ]; then
		check_rc 125 "as nobody, a policy file with allow cidr under net host is refused"
		check "naming the clause" contains "$ERR" "$pol:3:1: 'allow cidr 10.213.0.2/32:8080' is not enforced"
		return 0
	fi
	check "allow cidr ADDR:8080 reaches port 8080" \
		contains "$OUT" "tcp:10.213.0.2:8080 reached server 10.213.0.2 8080"
	check "and refuses port 8081 of the same address" \
		contains "$OUT" "tcp:10.213.0.2:8081 refused 1"
	check "and UDP to another port" contains "$OUT" "udp:10.213.0.2:9999 refused 1"
	jr_a --policy strict --net host -D 'allow cidr ::ffff:10.213.0.2/128' \
		-- python3 -c "$PROBE" tcp:10.213.0.2:8080 tcp:10.213.0.3:8080
	check "a rule in IPv4-mapped form (::ffff:10.213.0.2) allows that IPv4 address" \
		contains "$OUT" "tcp:10.213.0.2:8080 reached server 10.213.0.2 8080"
	check "and no other" contains "$OUT" "tcp:10.213.0.3:8080 refused 1"
}

# SIGKILL leaves the jailrun no time to remove its group: the next run
# with the filter removes groups whose jailrun is gone.
case_stale_group() {
	if [ "$JR_MODE" = nobody ]; then
		skip "a killed run's cgroup is removed by the next run" "the filter runs as root only"
		return 0
	fi
	marker=7373$$
	(cd "$WS" && exec nsenter --net="/run/netns/$NS_A" "$JR_BIN" --policy strict --net host \
		-D 'allow cidr 10.213.0.2/32' -- sleep $marker) </dev/null >/dev/null 2>&1 &
	pid=$!
	i=0
	while [ ! -d "$(cgroup_parent)/jailrun-$pid-0" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	check "the killed run's jail ends too" gone_within_5s "sleep $marker"
	check "its cgroup is left behind" test -d "$(cgroup_parent)/jailrun-$pid-0"
	jr_a --policy strict --net host -D 'allow cidr 10.213.0.2/32' -- true
	check "the next run removes it" test ! -d "$(cgroup_parent)/jailrun-$pid-0"
}

reason=$(why_not)
if [ -n "$reason" ]; then
	echo "ok 1 - kernel CIDR filter # SKIP $reason"
	echo "1..1"
	exit 0
fi
trap cleanup EXIT
if ! setup_network || ! start_servers; then
	echo "not ok 1 - test network namespaces and servers could not be set up"
	echo "1..1"
	exit 1
fi
run_cases case_without_rules case_allow_cidr case_port_rule case_stale_group
