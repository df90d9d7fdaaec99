#!/usr/bin/env python3
"""The destinations of the egress proxy's tests (proxy.sh, proxy-attacks.sh),
on the host, on free ports:

  A  HTTP on every address of the host (:: dual-stack where the host has
     IPv6, else 0.0.0.0), so that any address of the host that leads here
     (127.0.0.1, 127.0.0.2, ::1, the host's own) would reach it
  B  HTTP on 127.0.0.1 only
  S  HTTPS on 127.0.0.1 (DIR/cert.pem, DIR/key.pem)

    proxy-server.py DIR TOKEN SECONDS

Every server answers any request with 200 and the body
"TOKEN server=X host=HOST path=PATH[ got=LEN]" (HOST: the Host headers
it got, with commas between them if more than one; LEN: the length of the
request body, if there was one), preceded by N bytes of "x" for the path
/size/N; it keeps the connection open (HTTP/1.1) unless the request says close.  Each
accepted connection and each request is a line of DIR/log, written before
the answer is sent:

  X conn                      X req METHOD HOST PATH

DIR/ports gets "PORT_A PORT_B PORT_S" once all three listen; the servers
exit after SECONDS."""
import http.server
import os
import socket
import ssl
import sys
import threading



def web443(srv, token, log_path):
    """proxy-server.py --web443 DIR TOKEN LOG: HTTPS on 127.0.0.1:443 for
    the web-rule checks.  LOG gets "bytes" once a connection has sent
    anything, "tls" after a handshake; LOG.up once listening, LOG.busy
    if the port is taken."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(srv, "cert.pem"), os.path.join(srv, "key.pem"))
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", 443))
    except OSError:
        open(log_path + ".busy", "w").close()
        return
    s.listen(64)
    open(log_path + ".up", "w").close()

    def note443(line):
        with open(log_path, "a") as f:
            f.write(line + "\n")

    def serve(c):
        try:
            if not c.recv(1, socket.MSG_PEEK):
                return
            note443("bytes")
            t = ctx.wrap_socket(c, server_side=True)
            t.recv(4096)
            note443("tls")
            body = ("web443 " + token).encode()
            t.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            t.close()
        except (OSError, ssl.SSLError):
            note443("error")

    s.settimeout(120)
    while True:
        try:
            c, _ = s.accept()
        except socket.timeout:
            return
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if sys.argv[1] == "--web443":
    web443(*sys.argv[2:5])
    sys.exit(0)

DIR, TOKEN, SECONDS = sys.argv[1], sys.argv[2], float(sys.argv[3])
log_lock = threading.Lock()
log = open(os.path.join(DIR, "log"), "a", buffering=1)


def note(line):
    with log_lock:
        log.write(line + "\n")
        log.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 20

    def answer(self):
        host = ",".join(self.headers.get_all("Host") or ["-"])
        note("%s req %s %s %s" % (self.server.label, self.command, host, self.path))
        length = int(self.headers.get("Content-Length", "0") or 0)
        got = ""
        if length:
            got = " got=%d" % len(self.rfile.read(length))
        body = ("%s server=%s host=%s path=%s%s\n" % (TOKEN, self.server.label, host, self.path, got)).encode()
        if self.path.startswith("/size/"):
            body = b"x" * int(self.path[6:]) + body
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_PUT = answer

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 512
    daemon_threads = True
    tls = None

    def __init__(self, label, family, addr):
        self.label = label
        self.address_family = family
        super().__init__((addr, 0), Handler)

    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    def get_request(self):
        conn, peer = super().get_request()
        note("%s conn" % self.label)
        return conn, peer

    def finish_request(self, request, client_address):
        # The TLS handshake in the connection's own thread.
        if self.tls:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        pass


try:
    a = Server("A", socket.AF_INET6, "::")
except OSError:
    a = Server("A", socket.AF_INET, "0.0.0.0")
b = Server("B", socket.AF_INET, "127.0.0.1")
s = Server("S", socket.AF_INET, "127.0.0.1")
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(DIR, "cert.pem"), os.path.join(DIR, "key.pem"))
s.tls = ctx
for srv in (a, b, s):
    threading.Thread(target=srv.serve_forever, daemon=True).start()
ports = os.path.join(DIR, "ports")
with open(ports + ".tmp", "w") as f:
    f.write("%d %d %d\n" % (a.server_address[1], b.server_address[1], s.server_address[1]))
os.rename(ports + ".tmp", ports)
threading.Event().wait(SECONDS)
