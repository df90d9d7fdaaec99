#!/usr/bin/env python3
"""The egress-proxy cases of `make bench` (issue 9), in bench/timeit's JSONL shape.

    proxy.py JAILRUN NETBENCH WORKSPACE RUNS CONNS THROUGHPUT_OUT CONNRATE_OUT

NETBENCH is bench/netbench.c built static inside WORKSPACE, so the jail
runs the same client at the same path.  One `netbench serve` on the host's
127.0.0.1 answers everything.  Candidates, interleaved run by run after one
untimed warm-up round:

  direct   the client straight to the server over loopback;
  socat    through `socat TCP-LISTEN:P,bind=127.0.0.1,fork,reuseaddr
           TCP:127.0.0.1:S`, a plain TCP forwarder (socat's defaults: a
           process forked per connection, 8 KiB reads and writes); left out
           with a note when socat is not installed;
  jailrun proxy (CONNECT)
           the client in `jailrun -p strict -D 'net proxy' -D 'allow host
           bench.test:S' -D 'allow cidr 127.0.0.1/32' --resolve
           bench.test:127.0.0.1`, through the proxy at 127.0.0.1:3128 with
           CONNECT bench.test:S (the https way);
  jailrun proxy (http)
           the same with GET http://bench.test:S/... (plain HTTP through
           HTTP_PROXY); connection rate only.

Cases: throughput, one GET of 1 GiB per run; connection rate, CONNS
sequential requests per run (connect, request, a 512-byte answer, close).
The client times itself (netbench.c), so a jail's start-up is not in "ms";
"wall_ms" is the whole command, start-up included.  Each output file gets
one {"label", "argv"} line per candidate ({"label", "skipped"} for socat
when missing), then one line per timed run:

  {"label": "direct", "round": 0, "ms": 612.3, "bytes": 1073741824,
   "connections": 1, "wall_ms": 615.0}
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

GIB = 1 << 30
SMALL = 512
WARMUP = 1

jailrun, netbench, ws = sys.argv[1], sys.argv[2], sys.argv[3]
runs, conns = int(sys.argv[4]), int(sys.argv[5])
out_throughput, out_connrate = sys.argv[6], sys.argv[7]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, what):
    """Waits until 127.0.0.1:port is in LISTEN state, without connecting."""
    needle = "0100007F:%04X" % port
    for _ in range(500):
        with open("/proc/net/tcp") as f:
            for line in f:
                fields = line.split()
                if fields[1] == needle and fields[3] == "0A":
                    return
        if proc.poll() is not None:
            sys.exit("proxy.py: %s exited with status %d" % (what, proc.returncode))
        time.sleep(0.01)
    sys.exit("proxy.py: %s is not listening on %d" % (what, port))


def run(label, argv, rnd, f):
    t = time.perf_counter()
    p = subprocess.run(argv, cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    wall = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit("proxy.py: %s: %s exited with status %d" % (label, argv[0], p.returncode))
    if rnd < 0:
        return
    rec = json.loads(p.stdout.decode().strip().splitlines()[-1])
    rec = {"label": label, "round": rnd, **rec, "wall_ms": round(wall, 3)}
    f.write(json.dumps(rec) + "\n")
    f.flush()


def bench(path, cands, skipped, nruns):
    with open(path, "w") as f:
        for label, argv in cands:
            f.write(json.dumps({"label": label, "argv": argv}) + "\n")
        for label, reason in skipped:
            f.write(json.dumps({"label": label, "skipped": reason}) + "\n")
        for rnd in range(-WARMUP, nruns):
            for label, argv in cands:
                run(label, argv, rnd, f)


server = subprocess.Popen([netbench, "serve"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
procs = [server]
try:
    sport = int(server.stdout.readline())
    socat_port = None
    skipped = []
    if shutil.which("socat"):
        socat_port = free_port()
        socat = subprocess.Popen(["socat", "TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr" % socat_port,
                                  "TCP:127.0.0.1:%d" % sport], stdin=subprocess.DEVNULL)
        procs.append(socat)
        wait_listening(socat_port, socat, "socat")
    else:
        print("    socat not installed: its candidate is left out", file=sys.stderr)
        skipped.append(("socat", "socat not installed"))

    jail = [jailrun, "-p", "strict", "-D", "net proxy", "-D", "allow host bench.test:%d" % sport,
            "-D", "allow cidr 127.0.0.1/32", "--resolve", "bench.test:127.0.0.1", "--"]

    def cands(nbytes, count, modes):
        what = [str(sport), "bench.test", str(sport), str(nbytes), str(count)]
        c = [("direct", [netbench, "get", "direct"] + what)]
        if socat_port:
            c.append(("socat", [netbench, "get", "direct", str(socat_port)] + what[1:]))
        for mode in modes:
            c.append(("jailrun proxy (%s)" % ("CONNECT" if mode == "connect" else mode),
                      jail + [netbench, "get", mode, "3128"] + what[1:]))
        return c

    bench(out_throughput, cands(GIB, 1, ["connect"]), skipped, runs)
    bench(out_connrate, cands(SMALL, conns, ["connect", "http"]), skipped, runs)
finally:
    for p in reversed(procs):
        p.terminate()
        p.wait()
