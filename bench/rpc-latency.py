#!/usr/bin/env python3
"""Per-call latency of the agent API, in bench/timeit's JSONL shape.

    rpc-latency.py JAILRUN RUNS WORKSPACE exec|readfile

exec:     /bin/true as a bare fork+exec, as `exec` through a running
          `jailrun serve --policy strict`, and in a fresh jail.
readfile: a 4 KiB workspace file read by a bare `cat`, and by `readFile`
          through the same server.
Candidates are interleaved run by run, after two warm-up rounds; each
RPC is timed from writing the request line to reading its answer."""
import json
import os
import subprocess
import sys
import time

jailrun, runs, ws, case = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

server = subprocess.Popen([jailrun, "serve", "--policy", "strict"], cwd=ws,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = 0


def rpc(method, params):
    global next_id
    next_id += 1
    server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method,
                                    "params": params}) + "\n").encode())
    server.stdin.flush()
    answer = json.loads(server.stdout.readline())
    if "error" in answer:
        sys.exit("rpc-latency: %s: %s" % (method, answer["error"]["message"]))
    return answer["result"]


def timed(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


with open(os.path.join(ws, "file4k"), "wb") as f:
    f.write(os.urandom(4096))

if case == "exec":
    cands = [
        ("bare", ["/bin/true"], lambda: subprocess.run(["/bin/true"], check=True)),
        ("jailrun serve exec", ["exec", "/bin/true"], lambda: rpc("exec", {"argv": ["/bin/true"]})),
        ("jailrun strict", [jailrun, "--policy", "strict", "--", "/bin/true"],
         lambda: subprocess.run([jailrun, "--policy", "strict", "--", "/bin/true"], cwd=ws, check=True)),
    ]
else:
    cands = [
        ("bare", ["cat", "file4k"],
         lambda: subprocess.run(["cat", "file4k"], cwd=ws, check=True, stdout=subprocess.DEVNULL)),
        ("jailrun serve readFile", ["readFile", "file4k"],
         lambda: rpc("readFile", {"path": "file4k", "encoding": "base64"})),
    ]

for label, argv, _ in cands:
    print(json.dumps({"label": label, "argv": argv}))
for rnd in range(-2, runs):
    for label, _, fn in cands:
        ms = timed(fn)
        if rnd >= 0:
            print(json.dumps({"label": label, "round": rnd, "ms": round(ms, 3), "cpu_ms": 0}))
server.stdin.close()
server.wait()
