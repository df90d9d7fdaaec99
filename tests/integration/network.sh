#!/bin/sh
# Network modes: none (the jail's own namespace, only lo) and host (the
# host's namespace, TCP ports limited by Landlock where the policy lists
# them).  Servers run on the host's loopback; no outside address is used.
. "$JR_SRCDIR/tests/integration/lib.sh"

# Two listening TCP servers on the host's 127.0.0.1, on free ports.
start_servers() {
	PORTS_FILE=$JR_TOP/ports.$JR_MODE
	python3 - "$PORTS_FILE" <<'PYEOF' &
import socket, sys, os, threading
socks = []
for _ in range(2):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0)); s.listen(16); socks.append(s)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(" ".join(str(s.getsockname()[1]) for s in socks))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
def serve(s):
    while True:
        c, _ = s.accept(); c.sendall(b"host-server\n"); c.close()
for s in socks:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
threading.Event().wait(120)
PYEOF
	SERVER_PID=$!
	i=0
	while [ ! -s "$PORTS_FILE" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	read -r PORT_A PORT_B <"$PORTS_FILE"
}

stop_servers() {
	kill "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	rm -f "$PORTS_FILE"
}

PROBE='
import socket, sys
for port in sys.argv[1:]:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(("127.0.0.1", int(port))); print(port, "reached", s.recv(64).decode().strip())
    except OSError as e:
        print(port, "refused", e.errno)'

case_net_none() {
	start_servers
	jr --policy strict -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	check "net none: lo is the only interface" test "$(cat "$OUT")" = lo
	jr --policy strict -- python3 -c "$PROBE" "$PORT_A"
	check "a server on the host's 127.0.0.1 is not reachable" contains "$OUT" "$PORT_A refused"
	check "(nothing came from it)" lacks "$OUT" host-server
	# The jail's own loopback is its own, and works: a server inside on the
	# very port the host's server holds answers the jail.
	jr --policy strict -- python3 -c '
import socket, sys, threading
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
def serve():
    c, _ = s.accept(); c.sendall(b"jail-server\n"); c.close()
threading.Thread(target=serve).start()
print(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).recv(64).decode().strip())' "$PORT_A"
	check "a server inside the jail on its own 127.0.0.1 works (same port as the host's)" \
		contains "$OUT" jail-server
	stop_servers
}

case_net_host() {
	start_servers
	jr --policy strict --net host -- sh -c 'tail -n +3 /proc/net/dev | wc -l'
	check "net host: the host's interfaces are there" test "$(cat "$OUT")" -eq "$(tail -n +3 /proc/net/dev | wc -l)"
	jr --policy strict --net host -- python3 -c "$PROBE" "$PORT_A" "$PORT_B"
	check "without allow connect, every port is reachable" sh -c "grep -q '$PORT_A reached' '$OUT' && grep -q '$PORT_B reached' '$OUT'"
	jr --policy strict --net host -D "allow connect $PORT_A" -- python3 -c "$PROBE" "$PORT_A" "$PORT_B"
	check "allow connect PORT: that port is reachable" contains "$OUT" "$PORT_A reached host-server"
	check "another port is refused (Landlock: EACCES)" contains "$OUT" "$PORT_B refused 13"
	jr --policy strict --net host -D "allow connect $PORT_A" -D "allow connect !$PORT_A" -D "allow connect $PORT_B" \
		-- python3 -c "$PROBE" "$PORT_A" "$PORT_B"
	check "!PORT takes a port back" sh -c "grep -q '$PORT_A refused 13' '$OUT' && grep -q '$PORT_B reached' '$OUT'"
	jr --policy strict --net host -D 'allow bind 18573' -- python3 -c '
import socket
for port in (18573, 18574):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); print(port, "bound")
    except OSError as e:
        print(port, "refused", e.errno)'
	check "allow bind PORT: that port can be bound" contains "$OUT" "18573 bound"
	check "another cannot" contains "$OUT" "18574 refused 13"
	R=$(dirname "$WS")/report.json
	jr --policy strict --net host -D "allow connect $PORT_A" --report "$R" -- true
	check "the report says network host and the Landlock TCP rights" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
e = r["enforcement"]
assert e["network"] == "host", e["network"]
assert e["landlock"]["handledAccessNet"] == ["connect_tcp"], e["landlock"]
assert "net" not in e["namespaces"], e["namespaces"]' "$R"
	jr --policy strict --net host -D 'allow host example.com' -- touch "$WS/ran"
	check_rc 125 "allow host (needs the egress proxy) is refused, not ignored"
	check "nothing ran" test ! -e "$WS/ran"
	stop_servers
}

case_net_pasta() {
	if ! command -v pasta >/dev/null; then
		skip "net pasta" "pasta is not installed (apt-get install passt)"
		return 0
	fi
	if ! as_user sh -c 'test -r /dev/net/tun -a -w /dev/net/tun'; then
		jr --policy strict --net pasta -- touch "$WS/ran"
		check_rc 125 "net pasta without access to /dev/net/tun is refused, not run without a network"
		check "saying why" contains "$ERR" "/dev/net/tun"
		check "nothing ran" test ! -e "$WS/ran"
		return 0
	fi
	start_servers
	jr --policy strict --net pasta -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort | tr "\n" " "'
	check_rc 0 "net pasta runs"
	check "the jail has an interface besides lo" sh -c "grep -qv '^lo $' '$OUT' && [ \"\$(wc -w < '$OUT')\" -ge 2 ]"
	jr --policy strict --net pasta -- python3 -c '
import socket, sys
route = open("/proc/net/route").read().split("\n")[1].split()
gw = socket.inet_ntoa(bytes.fromhex(route[2])[::-1])
s = socket.socket(); s.settimeout(3)
s.connect((gw, int(sys.argv[1]))); print("reached", s.recv(64).decode().strip())' "$PORT_A"
	check "the host's loopback service is reached through pasta's gateway" contains "$OUT" "reached host-server"
	check "pasta is stopped with the run" gone_within_5s "/usr/bin/pasta --config-net"
	stop_servers
}

run_cases case_net_none case_net_host case_net_pasta
