#!/bin/sh
# net proxy: the jail's only way out is jailrun's egress proxy, which lets
# through what allow host / allow cidr say.  Real servers on the host's
# loopback (proxy-server.py: A plain HTTP on every address of the host, B
# plain HTTP on 127.0.0.1, S HTTPS on 127.0.0.1 with a certificate made
# here), reached under names pinned with --resolve; no DNS, no internet.
# Every refusal is checked on the server's side too: it saw nothing.
# The attacks are in proxy-attacks.sh.
. "$JR_SRCDIR/tests/integration/proxy-lib.sh"

if python3 -c 'import jsonschema' 2>/dev/null; then
	SCHEMA=$JR_TOP/jailrun-report.schema.json
	CHECKER=$JR_TOP/report-check.py
	cp "$JR_SRCDIR/man/jailrun-report.schema.json" "$SCHEMA"
	cp "$JR_SRCDIR/tests/integration/report-check.py" "$CHECKER"
	chmod 644 "$SCHEMA" "$CHECKER"
fi

# A URL's host part for ADDR (IPv6 in brackets).
url_host() {
	case $1 in
	*:*) echo "[$1]" ;;
	*) echo "$1" ;;
	esac
}

# curl in the jail, printing the body then "code=STATUS connect=STATUS
# rc=EXIT" on a line of its own (the proxy's answer to CONNECT is
# %{http_connect}).
CURL='curl -sS --max-time 10 -w "\ncode=%{http_code} connect=%{http_connect}\n" "$@"; echo "rc=$?"'

case_reach() {
	put_client
	ws_put ca.pem <"$SRV/cert.pem"
	mark
	jrc -v -- curl -sS --max-time 10 "http://allowed.test:$PORT_A/curl-http"
	check_rc 0 "curl through the proxy (plain HTTP) to an allowed name"
	check "the body is the server's (its token, the name and port as Host)" \
		test "$(cat "$OUT")" = "$TOKEN server=A host=allowed.test:$PORT_A path=/curl-http"
	check "the server logged that request" logged "A req GET allowed.test:$PORT_A /curl-http"
	check "-v shows the proxy's line for it" contains "$ERR" "proxy: GET allowed.test:$PORT_A"

	mark
	jrc -v -- curl -sS --max-time 10 --cacert ca.pem "https://secure.test:$PORT_S/curl-https"
	check_rc 0 "curl through the proxy (HTTPS, CONNECT) to an allowed name"
	check "the body is the TLS server's, its certificate verified for the name" \
		test "$(cat "$OUT")" = "$TOKEN server=S host=secure.test:$PORT_S path=/curl-https"
	check "the server logged that request" logged "S req GET secure.test:$PORT_S /curl-https"
	check "it went through a CONNECT tunnel" contains "$ERR" "proxy: CONNECT secure.test:$PORT_S"

	# urllib finds the proxy by the environment alone.
	ws_put urls.py <<'EOF'
import os, ssl, sys, urllib.request
pa, ps = sys.argv[1:3]
print("proxy", os.environ.get("http_proxy"), os.environ.get("HTTPS_PROXY"))
print(urllib.request.urlopen("http://allowed.test:%s/urllib-http" % pa, timeout=10).read().decode(), end="")
ctx = ssl.create_default_context(cafile="ca.pem")
print(urllib.request.urlopen("https://secure.test:%s/urllib-https" % ps, context=ctx, timeout=10).read().decode(), end="")
EOF
	mark
	jrc -- python3 urls.py "$PORT_A" "$PORT_S"
	check_rc 0 "python's urllib, with no proxy configured but the environment's"
	check "the environment names the proxy" \
		contains "$OUT" "proxy http://127.0.0.1:3128 http://127.0.0.1:3128"
	check "urllib: plain HTTP, the server's body" \
		contains "$OUT" "$TOKEN server=A host=allowed.test:$PORT_A path=/urllib-http"
	check "urllib: HTTPS, the server's body" \
		contains "$OUT" "$TOKEN server=S host=secure.test:$PORT_S path=/urllib-https"
	check "the servers logged both requests" logged "A req GET allowed.test:$PORT_A /urllib-http"
	check "(the HTTPS one too)" logged "S req GET secure.test:$PORT_S /urllib-https"
}

# Bulk data both ways, through plain HTTP and a CONNECT tunnel.
case_relay() {
	ws_put ca.pem <"$SRV/cert.pem"
	big=8000000
	jrc -- sh -c "
		head -c 3000000 /dev/zero | curl -sS --max-time 20 --data-binary @- http://allowed.test:$PORT_A/up
		curl -sS --max-time 20 -o big.http http://allowed.test:$PORT_A/size/$big
		curl -sS --max-time 20 --cacert ca.pem -o big.https https://secure.test:$PORT_S/size/$big"
	check_rc 0 "8 MB down and 3 MB up through the proxy"
	check "the server got the 3 MB request body whole" \
		contains "$OUT" "$TOKEN server=A host=allowed.test:$PORT_A path=/up got=3000000"
	for f in http https; do
		check "the 8 MB answer came whole ($f)" sh -c \
			"[ \$(head -c $big '$WS/big.$f' | tr -d x | wc -c) -eq 0 ] &&
			 tail -c +$((big + 1)) '$WS/big.$f' | grep -q '^$TOKEN server=.* path=/size/$big\$'"
	done
}

# How the rules match: ports, wildcards, the form of the name, literals.
case_rules() {
	put_client
	mark
	jrc -D "allow host *.wild.test:$PORT_A" -D 'allow host noport.test' --resolve a.b.wild.test:127.0.0.1 \
		--resolve wild.test:127.0.0.1 --resolve noport.test:127.0.0.1 -- sh -c "
		python3 pc.py 'GET http://a.b.wild.test:$PORT_A/wild HTTP/1.1' | tail -n 3 | head -n 1
		python3 pc.py 'GET http://wild.test:$PORT_A/wild HTTP/1.1' | head -n 1
		python3 pc.py 'GET http://noport.test:$PORT_A/noport HTTP/1.1' | head -n 1
		python3 pc.py 'GET http://ALLOWED.Test.:$PORT_A/case HTTP/1.1' | tail -n 3 | head -n 1"
	check "allow host *.wild.test:PORT lets a subdomain through" \
		grep -qx "$TOKEN server=A host=a.b.wild.test:$PORT_A path=/wild" "$OUT"
	check "but not wild.test itself (403)" test "$(sed -n 2p "$OUT")" = "HTTP/1.1 403 Forbidden"
	check "allow host without a port: not another port than 80 and 443 (403)" \
		test "$(sed -n 3p "$OUT")" = "HTTP/1.1 403 Forbidden"
	check "a name in capitals with a final dot is the same name" \
		grep -q "^$TOKEN server=A host=ALLOWED.Test.:$PORT_A path=/case\$" "$OUT"
	check "the server saw only the two let through" \
		test "$(since_mark | grep -c '^A req')" -eq 2

	mark
	jrc -- python3 pc.py "GET http://127.0.0.1:$PORT_B/v4 HTTP/1.1"
	check "an IPv4 literal that allow cidr covers is let through (any port)" \
		contains "$OUT" "$TOKEN server=B host=127.0.0.1:$PORT_B path=/v4"
	jrc -- python3 pc.py "GET http://[::ffff:127.0.0.1]:$PORT_A/mapped HTTP/1.1"
	check "and in its IPv4-mapped IPv6 form" \
		contains "$OUT" "$TOKEN server=A host=[::ffff:127.0.0.1]:$PORT_A path=/mapped"
	if ! curl -sS --noproxy '*' --max-time 5 "http://[::1]:$PORT_A/control" >/dev/null 2>&1; then
		skip "an IPv6 literal that allow cidr covers" "server A is not reachable on ::1"
		return 0
	fi
	jrp -D 'allow cidr ::1/128' -- python3 pc.py "GET http://[::1]:$PORT_A/v6 HTTP/1.1"
	check "an IPv6 literal that allow cidr covers is let through" \
		contains "$OUT" "$TOKEN server=A host=[::1]:$PORT_A path=/v6"
	jrp -D 'allow cidr ::1/128' -- python3 pc.py "CONNECT [::1]:$PORT_A HTTP/1.1"
	check "CONNECT to it too" status_is "HTTP/1.1 200 Connection established"
	mark
	jrp -D 'allow cidr ::1/128' -- python3 pc.py "CONNECT [::2]:$PORT_A HTTP/1.1"
	check "another IPv6 address is not (403)" refused_403
	check "the server saw nothing" unseen
}

case_internal_refused() {
	put_client
	ws_put ca.pem <"$SRV/cert.pem"
	# No allow cidr: allowed.test's address, 127.0.0.1, is internal.
	mark
	jrp -- sh -c "$CURL" curl "http://allowed.test:$PORT_A/internal"
	check "without allow cidr, the allowed name pinned to 127.0.0.1 gets 403" contains "$OUT" "code=403"
	check "the body says why: an internal address no allow cidr covers" \
		contains "$OUT" "resolves to 127.0.0.1, an internal address"
	check "(naming the clause: allow cidr)" contains "$OUT" "'allow cidr'"
	check "the server saw nothing" unseen
	mark
	jrp -- sh -c "$CURL" curl --cacert ca.pem "https://secure.test:$PORT_S/internal"
	check "HTTPS (CONNECT) the same: 403 to the CONNECT" contains "$OUT" "connect=403"
	check "and curl failed" lacks "$OUT" "rc=0"
	check "the TLS server saw nothing" unseen
	# A name the proxy resolves itself, through /etc/hosts.
	mark
	jrp -D "allow host localhost:$PORT_A" -- python3 pc.py "GET http://localhost:$PORT_A/ HTTP/1.1"
	check "allow host localhost: localhost resolves to loopback, 403" refused_403
	check "the server saw nothing" unseen
}

case_refused() {
	put_client
	mark
	jrc -- sh -c "$CURL" curl "http://other.test:$PORT_A/other"
	check "a name no allow host matches: 403" contains "$OUT" "code=403"
	check "the body names the clause (allow host)" \
		contains "$OUT" "other.test port $PORT_A: no 'allow host' rule"
	check "the server saw nothing" unseen
	mark
	jrc -- sh -c "$CURL" curl "http://allowed.test:$PORT_B/port"
	check "the allowed name on another port (one allow cidr would let through by address): 403" \
		contains "$OUT" "code=403"
	check "the server on that port saw nothing" unseen

	# Addresses that lead to server A, none covered by allow cidr
	# 127.0.0.1/32.  The host reaches each of them directly (so each
	# refusal below is the proxy's doing).
	for addr in 127.0.0.2 ::1 $HOST_ADDRS; do
		u=$(url_host "$addr")
		mark
		got=$(curl -sS --noproxy '*' --max-time 5 "http://$u:$PORT_A/control" 2>&1)
		if [ "$got" != "$TOKEN server=A host=$u:$PORT_A path=/control" ]; then
			skip "an address not in allow cidr: $addr" "server A is not reachable there from the host"
			continue
		fi
		mark
		# --noproxy "": ::1 is in NO_PROXY, and the proxy is what is tested.
		jrc -- sh -c "$CURL" curl --noproxy "" "http://$u:$PORT_A/ip"
		check "plain HTTP to $addr (not in allow cidr): 403" contains "$OUT" "code=403"
		check "the body names the clause (allow cidr)" contains "$OUT" "no 'allow cidr' rule"
		jrc -- python3 pc.py "CONNECT $u:$PORT_A HTTP/1.1"
		check "CONNECT to $addr: 403" refused_403
		check "the server saw neither" unseen
	done

	# Around the proxy: straight to the host's addresses.
	for addr in 127.0.0.1 $HOST_ADDRS; do
		u=$(url_host "$addr")
		mark
		jrc -- sh -c "$CURL" curl --noproxy '*' "http://$u:$PORT_A/direct"
		check "curl --noproxy '*' to $addr fails in the jail" sh -c "! grep -q '^rc=0$' '$OUT'"
		check "no body came back" lacks "$OUT" "$TOKEN"
		check "the server saw nothing" unseen
	done
}

case_report() {
	if [ -z "${CHECKER:-}" ]; then
		skip "denials.network in the report" "the python3 jsonschema module is missing"
		return 0
	fi
	put_client
	REPORT=$WS/report.json
	jrc --report "$REPORT" -- sh -c "
		python3 pc.py 'GET http://other.test:$PORT_A/ HTTP/1.1' >/dev/null
		python3 pc.py 'CONNECT other.test:$PORT_A HTTP/1.1' >/dev/null
		python3 pc.py 'CONNECT 127.0.0.2:$PORT_B HTTP/1.1' >/dev/null
		curl -sS --max-time 10 http://allowed.test:$PORT_A/fine"
	check_rc 0 "a run with refusals and an allowed request, with --report"
	check "the allowed request went through" contains "$OUT" "path=/fine"
	check "the report is valid; denials.network lists each refused destination" \
		python3 "$CHECKER" "$SCHEMA" "$REPORT" 'status==0' \
		'enforcement.network=="proxy"' 'enforcement.namespaces has "net"' \
		'len(denials.network)==2' \
		"denials.network[host=other.test].port==$PORT_A" \
		'denials.network[host=other.test].rule=~"allow host"' \
		'denials.network[host=other.test].count==2' \
		"denials.network[host=127.0.0.2].port==$PORT_B" \
		'denials.network[host=127.0.0.2].rule=~"allow cidr"' \
		'denials.network[host=127.0.0.2].count==1' \
		'exists(denials.network[host=allowed.test])==false'
	jrp --report "$REPORT" -- python3 pc.py "GET http://allowed.test:$PORT_A/ HTTP/1.1"
	check "an internal address refused is a denial too (count >= 1)" \
		python3 "$CHECKER" "$SCHEMA" "$REPORT" 'len(denials.network)==1' \
		"denials.network[host=allowed.test].port==$PORT_A" \
		'denials.network[host=allowed.test].rule=~"internal address"' \
		'denials.network[host=allowed.test].count>=1'
	jrc --report "$REPORT" -- curl -sS --max-time 10 "http://allowed.test:$PORT_A/fine"
	check "no refusal, no denial" python3 "$CHECKER" "$SCHEMA" "$REPORT" 'denials.network==[]'
}

case_concurrent() {
	ws_put many.py <<'EOF'
import socket, sys, threading
port, token, n = int(sys.argv[1]), sys.argv[2], 200
barrier = threading.Barrier(n, timeout=30)
results = [None] * n
def one(i):
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=30)
        s.sendall(b"CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n" % (port, port))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                raise OSError("closed during CONNECT")
            head += chunk
        if not head.startswith(b"HTTP/1.1 200"):
            raise OSError(head.split(b"\r\n")[0].decode())
        barrier.wait()  # all 200 tunnels open at once
        s.sendall(b"GET /many/%d HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n" % i)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        results[i] = data.split(b"\r\n\r\n", 1)[1].decode()
    except Exception as e:
        results[i] = "error %r" % e
        barrier.abort()
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
good = sum(r == "%s server=A host=allowed.test path=/many/%d\n" % (token, i) for i, r in enumerate(results))
print("good", good)
for r in results:
    if not r.startswith(token):
        print(r)
        break
EOF
	mark
	jrc -- python3 many.py "$PORT_A" "$TOKEN"
	check_rc 0 "200 concurrent CONNECT tunnels through the proxy"
	check "all 200 were open at once and each got its own correct body" contains "$OUT" "good 200"
	check "the server saw 200 requests" test "$(since_mark | grep -c '^A req GET allowed.test /many/')" -eq 200
}

case_session() {
	n=t$$-$JR_MODE-proxy
	mark
	jrc --session "$n" -- curl -sS --max-time 10 "http://allowed.test:$PORT_A/session-1"
	check_rc 0 "a session started with net proxy runs its first command"
	check "which reaches the allowed name through the proxy" \
		test "$(cat "$OUT")" = "$TOKEN server=A host=allowed.test:$PORT_A path=/session-1"
	jrc --session "$n" -- curl -sS --max-time 10 "http://allowed.test:$PORT_A/session-2"
	check_rc 0 "a later command in the running session"
	check "reaches it too" test "$(cat "$OUT")" = "$TOKEN server=A host=allowed.test:$PORT_A path=/session-2"
	check "the server saw both" \
		test "$(since_mark | grep -c "^A req GET allowed.test:$PORT_A /session-")" -eq 2
	mark
	jrc --session "$n" -- sh -c "$CURL" curl "http://other.test:$PORT_A/session-3"
	check "a name no allow host matches is refused in the session too" contains "$OUT" "code=403"
	check "the server saw nothing" unseen
	# The session's proxy: a child of its supervisor in the host's
	# network namespace.
	info=/tmp/jailrun-$CASE_UID/$n/info.json
	[ -n "${XDG_RUNTIME_DIR:-}" ] && info=$XDG_RUNTIME_DIR/jailrun/$n/info.json
	sup=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$info" 2>/dev/null)
	proxy=
	for c in $(pgrep -P "${sup:-0}"); do
		[ "$(readlink "/proc/$c/ns/net" 2>/dev/null)" = "$(readlink /proc/self/ns/net)" ] && proxy=$c
	done
	check "the session's proxy runs beside its supervisor" test -n "$proxy"
	jr --session "$n" --stop
	check_rc 0 "the session stops"
	check "and its proxy with it" gone_pid "${proxy:-0}"
}

case_explain() {
	jr --policy strict -D 'net proxy' -D "allow host allowed.test:$PORT_A" -D 'allow cidr 127.0.0.1/32' \
		--resolve allowed.test:127.0.0.1 --explain
	check_rc 0 "--explain with net proxy"
	check "net proxy: the egress proxy is the mechanism" sh -c \
		"grep -A1 '^  <command line>:1:1: net proxy\$' '$OUT' | grep -q \"^      -> .*jailrun's egress proxy\""
	check "allow host: the egress proxy" sh -c \
		"grep -A1 ': allow host allowed.test:$PORT_A\$' '$OUT' | grep -q '^      -> the egress proxy: '"
	check "allow cidr: the egress proxy" sh -c \
		"grep -A1 ': allow cidr 127.0.0.1/32\$' '$OUT' | grep -q '^      -> the egress proxy: '"
	jr --policy strict --net host -D 'allow host allowed.test' -- touch "$WS/ran"
	check_rc 125 "allow host under net host is refused (125)"
	check "with one line saying why" sh -c \
		"[ \$(wc -l <'$ERR') -eq 1 ] && grep -q \"'allow host allowed.test' is not enforced: .*net proxy\" '$ERR'"
	check "nothing ran" test ! -e "$WS/ran"
	jr --policy strict --net proxy -D 'allow connect 80' -- touch "$WS/ran"
	check_rc 125 "allow connect under net proxy is refused (125)"
	check "with one line saying why" sh -c \
		"[ \$(wc -l <'$ERR') -eq 1 ] && grep -q \"'allow connect 80' is not enforced\" '$ERR'"
	check "nothing ran" test ! -e "$WS/ran"
}

run_cases case_reach case_relay case_rules case_internal_refused case_refused case_report case_concurrent case_session \
	case_explain
