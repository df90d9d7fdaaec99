# What proxy.sh and proxy-attacks.sh share: the servers on the host
# (proxy-server.py), a raw client for the jail, and the policy.
#
# Names the tests use, all pinned with --resolve (no DNS, no internet):
#   allowed.test  allow host allowed.test:$PORT_A   -> 127.0.0.1 (server A)
#   secure.test   allow host secure.test:$PORT_S    -> 127.0.0.1 (server S, TLS)
#   other.test    no allow host                     -> 127.0.0.1
# jrp runs jailrun with net proxy and these; jrc adds allow cidr 127.0.0.1/32,
# without which 127.0.0.1 is an internal address the proxy refuses.
. "$JR_SRCDIR/tests/integration/lib.sh"

for tool in curl openssl; do
	if ! command -v $tool >/dev/null; then
		echo "Bail out! $tool is missing (contrib/setup-deps.sh installs it)"
		exit 1
	fi
done

SRV=$JR_TOP/servers
mkdir -p "$SRV"
TOKEN=tok-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=secure.test -addext subjectAltName=DNS:secure.test \
	-keyout "$SRV/key.pem" -out "$SRV/cert.pem" >/dev/null 2>&1; then
	echo "Bail out! openssl could not make a self-signed certificate"
	exit 1
fi
python3 "$JR_SRCDIR/tests/integration/proxy-server.py" "$SRV" "$TOKEN" 300 2>"$SRV/stderr" &
SRV_PID=$!
trap 'kill $SRV_PID 2>/dev/null; rm -rf "$JR_TOP"' EXIT
i=0
while [ ! -s "$SRV/ports" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
if ! read -r PORT_A PORT_B PORT_S <"$SRV/ports"; then
	echo "Bail out! the test servers did not start: $(cat "$SRV/stderr")"
	exit 1
fi
# The host's addresses other than loopback (where server A listens too).
HOST_ADDRS=$(hostname -I 2>/dev/null)

jrp() {
	jr --policy strict --net proxy -D "allow host allowed.test:$PORT_A" \
		-D "allow host secure.test:$PORT_S" --resolve allowed.test:127.0.0.1 \
		--resolve secure.test:127.0.0.1 --resolve other.test:127.0.0.1 "$@"
}
jrc() { jrp -D 'allow cidr 127.0.0.1/32' "$@"; }

# mark, then `check ... unseen`: no server saw anything since the mark.
mark() { MARK=$(cat "$SRV/log" 2>/dev/null | wc -l); }
unseen() {
	sleep 0.05 # a connection the proxy made would be logged by now
	[ "$(cat "$SRV/log" 2>/dev/null | wc -l)" -eq "$MARK" ]
}
# The server's log since the mark.
since_mark() { tail -n +$((MARK + 1)) "$SRV/log"; }
logged() { since_mark | grep -qxF -- "$1"; }

# Files the jail reads must be in the workspace (its /tmp is its own).
ws_put() {
	cat >"$WS/$1"
	chmod 644 "$WS/$1"
	chown "$CASE_UID" "$WS/$1"
}

# pc.py [--big N] LINE...: sends the lines to the proxy (127.0.0.1:3128),
# each ended by CRLF; an empty LINE ends a request head, and one is added
# at the end if missing.  --big N adds a header of N bytes before that.
# Prints everything the proxy answers (CRs dropped) up to its EOF, then
# "[eof]", or "[reset]" / "[timeout]"; or, once a CONNECT is answered
# with 200, its head and "[tunnel]".
put_client() {
	ws_put pc.py <<'EOF'
import socket, sys
args = sys.argv[1:]
big = 0
if args[:1] == ["--big"]:
    big, args = int(args[1]), args[2:]
if not args or args[-1] != "":
    args.append("")
if big:
    args.insert(len(args) - 1, "X-Big: " + "a" * big)
data = "".join(a + "\r\n" for a in args).encode("latin-1")
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(data)
out, end = b"", "[eof]"
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
        if args[0].startswith("CONNECT ") and out.startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in out:
            end = "[tunnel]"
            break
except ConnectionResetError:
    end = "[reset]"
except socket.timeout:
    end = "[timeout]"
sys.stdout.write(out.decode("latin-1").replace("\r", "") + "\n" + end + "\n")
EOF
}

# Process PID gone (or a zombie) within 5 s.
gone_pid() {
	i=0
	while [ $i -lt 50 ]; do
		state=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null)
		[ -z "$state" ] || [ "$state" = Z ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# The status line the proxy answered, from $OUT.
status_line() { head -n 1 "$OUT"; }
status_is() { [ "$(status_line)" = "$1" ]; }
# A refusal as the proxy gives it: 403, X-Jailrun: refused, "jailrun: " body.
refused_403() {
	status_is "HTTP/1.1 403 Forbidden" && grep -qx "X-Jailrun: refused" "$OUT" &&
		grep -q "^jailrun: " "$OUT"
}
