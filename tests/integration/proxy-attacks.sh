#!/bin/sh
# net proxy under attack: requests crafted to get past the egress proxy's
# checks, and attempts to get around it.  The same servers and names as
# proxy.sh (proxy-lib.sh); every refusal is checked on the server's side
# too: it saw nothing.
. "$JR_SRCDIR/tests/integration/proxy-lib.sh"

# Plain HTTP: the server must see the authority the proxy checked as
# Host, whatever the client wrote there.
case_host_spoof() {
	put_client
	mark
	jrc -- python3 pc.py "GET http://allowed.test:$PORT_A/spoof HTTP/1.1" "Host: evil.example" \
		"host:evil2.example" "Connection: keep-alive"
	check "a request with Host: evil.example is forwarded (200)" status_is "HTTP/1.1 200 OK"
	check "the server answered with Host = the allowed authority" \
		contains "$OUT" "$TOKEN server=A host=allowed.test:$PORT_A path=/spoof"
	check "the server logged Host = the allowed authority" logged "A req GET allowed.test:$PORT_A /spoof"
	check "no spoofed Host reached it" sh -c "! tail -n +$((MARK + 1)) '$SRV/log' | grep -q evil"
	# A bare LF splits a line for many servers (RFC 9112 lets a recipient
	# take LF alone as a line end): one in the request target would put
	# a Host line of the client's ahead of the proxy's.
	mark
	jrc -- python3 pc.py "$(printf 'GET http://allowed.test:%s/lf\nHost:evil.example HTTP/1.1' "$PORT_A")"
	check "a bare LF in the request line: 400" status_is "HTTP/1.1 400 Bad Request"
	check "the server saw nothing" unseen
	mark
	jrc -- python3 pc.py "GET http://allowed.test:$PORT_A/lf2 HTTP/1.1" \
		"$(printf 'X-Note: a\nHost: evil.example')"
	check "a bare LF in a header: 400" status_is "HTTP/1.1 400 Bad Request"
	check "the server saw nothing" unseen
}

case_userinfo() {
	put_client
	# allow cidr 127.0.0.1/32: either half of these, taken as the
	# destination, would be let through to server A.
	mark
	jrc -- python3 pc.py "GET http://allowed.test:$PORT_A@127.0.0.1:$PORT_A/ui HTTP/1.1" \
		"Host: allowed.test:$PORT_A"
	check "an absolute URI with userinfo (allowed@address): 400" status_is "HTTP/1.1 400 Bad Request"
	check "the server saw nothing" unseen
	mark
	jrc -- python3 pc.py "GET http://allowed.test@evil.test/ HTTP/1.1" "Host: allowed.test"
	check "http://allowed.test@evil.test/: 400" status_is "HTTP/1.1 400 Bad Request"
	check "the server saw nothing" unseen
	mark
	jrc -- python3 pc.py "CONNECT user@allowed.test:$PORT_A HTTP/1.1"
	check "CONNECT user@allowed:port: 400" status_is "HTTP/1.1 400 Bad Request"
	check "the server saw nothing" unseen
}

# Allowed names the policy's own resolve lines send to internal
# addresses: refused without an allow cidr that covers them.
case_pinned_internal() {
	put_client
	pins="meta.test:169.254.169.254 ten.test:10.0.0.1 six.test:::1 mapped.test:::ffff:127.0.0.1"
	set --
	for p in $pins; do
		set -- "$@" --resolve "$p" -D "allow host ${p%%:*}:$PORT_A"
	done
	# shellcheck disable=SC2016 # expanded by the jail's sh
	PROBE='for n in meta ten six mapped; do
		printf "%s CONNECT " $n; python3 pc.py "CONNECT $n.test:$0 HTTP/1.1" | head -n 1
		printf "%s GET " $n; python3 pc.py "GET http://$n.test:$0/pinned HTTP/1.1" | head -n 1
	done'
	mark
	jrp "$@" -- sh -c "$PROBE" "$PORT_A"
	for p in $pins; do
		n=${p%%.*}
		check "an allowed name pinned to ${p#*:}: 403 to CONNECT" grep -qxF "$n CONNECT HTTP/1.1 403 Forbidden" "$OUT"
		check "and to GET" grep -qxF "$n GET HTTP/1.1 403 Forbidden" "$OUT"
	done
	check "the server (on ::, where ::1 and ::ffff:127.0.0.1 lead) saw nothing" unseen
	mark
	jrc "$@" -- sh -c "$PROBE" "$PORT_A"
	check "allow cidr 127.0.0.1/32 does not cover ::1" grep -qxF "six CONNECT HTTP/1.1 403 Forbidden" "$OUT"
	check "nor 169.254.169.254" grep -qxF "meta CONNECT HTTP/1.1 403 Forbidden" "$OUT"
	check "nor 10.0.0.1" grep -qxF "ten GET HTTP/1.1 403 Forbidden" "$OUT"
	check "but it covers ::ffff:127.0.0.1, the same address (control)" \
		grep -qxF "mapped GET HTTP/1.1 200 OK" "$OUT"
}

# One request per connection: what follows the first request on the
# connection goes nowhere else, nor is it served as a request.
case_pipelined() {
	put_client
	mark
	jrc -- python3 pc.py \
		"GET http://allowed.test:$PORT_A/first HTTP/1.1" "Host: allowed.test:$PORT_A" \
		"Connection: keep-alive" "Proxy-Connection: keep-alive" "" \
		"GET http://other.test:$PORT_A/second HTTP/1.1" "Host: other.test:$PORT_A" "" \
		"GET http://127.0.0.1:$PORT_B/third HTTP/1.1" "Host: 127.0.0.1:$PORT_B" ""
	check "the first of three pipelined requests is answered" contains "$OUT" "path=/first"
	check "with one response only" test "$(grep -c '^HTTP/1' "$OUT")" -eq 1
	check "the server got one connection and the first request only" \
		test "$(since_mark | tr '\n' '|')" = "A conn|A req GET allowed.test:$PORT_A /first|"
	check "the third's server (another port, covered by allow cidr) saw nothing" \
		sh -c "! tail -n +$((MARK + 1)) '$SRV/log' | grep -q '^B '"
}

# Addresses in the forms inet_aton takes and inet_pton does not: allow
# cidr 127.0.0.1/32 covers what they mean, so only their refusal keeps
# them off server A.
case_ip_forms() {
	put_client
	FORMS="2130706433 0x7f.1 127.1 0177.0.0.1 0x7f000001 127.0.0.1."
	mark
	# shellcheck disable=SC2016,SC2086 # the jail's sh expands; FORMS: one word each
	jrc -- sh -c 'port=$0; for f in $*; do
		printf "%s CONNECT " $f; python3 pc.py "CONNECT $f:$port HTTP/1.1" | head -n 1
		printf "%s GET " $f; python3 pc.py "GET http://$f:$port/form HTTP/1.1" | head -n 1
	done' "$PORT_A" $FORMS
	for f in $FORMS; do
		check "CONNECT $f:PORT is refused" \
			grep -qxE "$f CONNECT HTTP/1.1 (400 Bad Request|403 Forbidden)" "$OUT"
		check "GET http://$f:PORT/ is refused" grep -qxE "$f GET HTTP/1.1 (400 Bad Request|403 Forbidden)" "$OUT"
	done
	check "the server saw none of them" unseen
}

case_malformed() {
	put_client
	mark
	jrc -- python3 pc.py "GET /origin HTTP/1.1" "Host: allowed.test:$PORT_A"
	check "an origin-form request straight to the proxy: 400" status_is "HTTP/1.1 400 Bad Request"
	check "marked as jailrun's" contains "$OUT" "X-Jailrun: refused"
	check "the server saw nothing" unseen
	mark
	jrc -- python3 pc.py --big 20480 "GET http://allowed.test:$PORT_A/big HTTP/1.1" "Host: allowed.test"
	check "a 20 KiB header: 431" status_is "HTTP/1.1 431 Request Header Fields Too Large"
	check "the server saw nothing" unseen
	mark
	jrc -- python3 pc.py --big 8000 "GET http://allowed.test:$PORT_A/big8k HTTP/1.1"
	check "an 8 KB header passes (control)" contains "$OUT" "path=/big8k"
}

# The proxy is a child of jailrun's supervisor, in the host's network
# namespace (the jail's init is the other child, in the jail's).
case_proxy_dies_with_supervisor() {
	jr_background --policy strict --net proxy -- sleep 1718
	host_ns=$(readlink /proc/self/ns/net)
	proxy=
	i=0
	while [ -z "$proxy" ] && [ $i -lt 50 ]; do
		for c in $(pgrep -P "$JR_PID"); do
			[ "$(readlink "/proc/$c/ns/net" 2>/dev/null)" = "$host_ns" ] && proxy=$c
		done
		[ -n "$proxy" ] || sleep 0.1
		i=$((i + 1))
	done
	check "the proxy runs, a child of jailrun in the host's network namespace" test -n "$proxy"
	kill -KILL "$JR_PID"
	wait "$JR_PID" 2>/dev/null
	check "SIGKILL of jailrun's supervisor: the proxy does not outlive it" gone_pid "${proxy:-0}"
	check "nor does the jail" gone_within_5s "sleep 1718"
}

case_around_the_proxy() {
	ws_put bind.py <<'EOF'
import errno, socket
S = socket.SOL_SOCKET
for name, addr, opts in (("plain", "127.0.0.1", []), ("reuseaddr", "127.0.0.1", [socket.SO_REUSEADDR]),
                         ("reuseport", "127.0.0.1", [socket.SO_REUSEADDR, socket.SO_REUSEPORT]),
                         ("any", "0.0.0.0", [socket.SO_REUSEADDR, socket.SO_REUSEPORT])):
    s = socket.socket()
    for o in opts:
        s.setsockopt(S, o, 1)
    try:
        s.bind((addr, 3128)); s.listen(); print(name, "bound")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
EOF
	mark
	jrc -- sh -c "python3 bind.py; curl -sS --max-time 10 http://allowed.test:$PORT_A/after-bind"
	for how in plain reuseaddr reuseport any; do
		check "the jail cannot bind 127.0.0.1:3128 itself ($how): EADDRINUSE" grep -qx "$how EADDRINUSE" "$OUT"
	done
	check "the proxy still serves the jail afterwards" contains "$OUT" "path=/after-bind"
	ws_put direct.py <<'EOF'
import socket, sys
for host, port in (("127.0.0.1", sys.argv[1]), ("127.0.0.1", sys.argv[2]), ("127.0.0.1", sys.argv[3]), ("::1", sys.argv[1])):
    try:
        s = socket.create_connection((host, int(port)), timeout=3)
        print(host, "reached", s.recv(64))
    except OSError as e:
        print(host, "refused", e.errno)
EOF
	mark
	jrc -- python3 direct.py "$PORT_A" "$PORT_B" "$PORT_S"
	check "the host's loopback servers are not reachable directly (4 refused)" \
		test "$(grep -c ' refused ' "$OUT")" -eq 4
	check "the servers saw nothing" unseen
}

# A rule without a port is for the web: plain HTTP on 80 (forwarded with
# the checked Host) and TLS on 443 whose ClientHello names the host.  A
# raw tunnel there would let a client name any other site of the server
# (a CDN) in its own Host header or TLS server name.  Needs 127.0.0.1:443
# for a TLS server of the test's (the script runs as root in both modes).
case_web_rule_tls() {
	log443=$SRV/log443
	rm -f "$log443.up" "$log443.busy"
	: >"$log443"
	python3 "$JR_SRCDIR/tests/integration/proxy-server.py" --web443 "$SRV" "$TOKEN" "$log443" \
		2>"$SRV/stderr443" &
	web=$!
	i=0
	while [ ! -e "$log443.up" ] && [ ! -e "$log443.busy" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -e "$log443.up" ]; then
		kill $web 2>/dev/null
		for n in 1 2 3 4 5 6 7 8; do
			skip "web-rule TLS check $n" "127.0.0.1:443 is taken on this host"
		done
		return
	fi
	cp "$SRV/cert.pem" "$WS/ca.pem"
	chmod 644 "$WS/ca.pem"
	jrw() {
		jr --policy strict --net proxy -D 'allow host secure.test' -D 'allow cidr 127.0.0.1/32' \
			--resolve secure.test:127.0.0.1 "$@"
	}
	jrw -- curl -sS -m 10 --cacert ca.pem https://secure.test/
	check "a rule without a port: TLS naming the host on 443 goes through" contains "$OUT" "web443 $TOKEN"
	ws_put sni.py <<'EOF'
import socket, ssl, sys
mode = sys.argv[1]
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT secure.test:443 HTTP/1.1\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    chunk = s.recv(1)
    if not chunk:
        break
    head += chunk
print(head.split(b"\r\n")[0].decode())
try:
    if mode == "plain":
        s.sendall(b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        print("answer", s.recv(100))
    else:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        t = ctx.wrap_socket(s, server_hostname="evil.example")
        t.sendall(b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        print("answer", t.recv(100))
except (OSError, ssl.SSLError) as e:
    print("closed", type(e).__name__)
EOF
	: >"$log443"
	R=$WS/sni-report.json
	jrw --report "$R" -- python3 sni.py tls
	check "TLS naming another server through CONNECT secure.test:443 is cut off" \
		sh -c "grep -q '^closed' '$OUT' && ! grep -q web443 '$OUT'"
	check "the server got not one byte of it" test ! -s "$log443"
	check "the report counts the refusal" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["denials"]["network"]
sys.exit(0 if any(x["host"] == "secure.test" and x["port"] == 443 and "TLS" in x["rule"] for x in d) else 1)' "$R"
	jrw -- python3 sni.py plain
	check "plain bytes through CONNECT secure.test:443 are cut off too" \
		sh -c "! grep -q web443 '$OUT' && ! grep -q \"^answer b'[^']\" '$OUT'"
	check "the server got not one byte of them" test ! -s "$log443"
	put_client
	jrw -- python3 pc.py "CONNECT secure.test:80 HTTP/1.1"
	check "a rule without a port gives no raw tunnel to port 80 (403)" refused_403
	# Naming the port asks for a raw tunnel: plain bytes reach the server.
	jr --policy strict --net proxy -D 'allow host secure.test:443' -D 'allow cidr 127.0.0.1/32' \
		--resolve secure.test:127.0.0.1 -- python3 sni.py plain
	check "allow host secure.test:443 is a raw tunnel: the bytes reach the server" grep -qx bytes "$log443"
	check "(the control for the two checks above)" contains "$OUT" "HTTP/1.1 200 Connection established"
	kill $web 2>/dev/null
	wait $web 2>/dev/null
}

run_cases case_web_rule_tls case_host_spoof case_userinfo case_pinned_internal case_pipelined case_ip_forms \
	case_malformed case_proxy_dies_with_supervisor case_around_the_proxy
