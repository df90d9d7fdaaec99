#!/usr/bin/env python3
"""A small JSON-RPC 2.0 driver for `jailrun serve` (serve.sh), stdlib only.

    rpc-driver.py [--sync-dir DIR] [--timeout SECONDS] -- SERVER-COMMAND...

starts SERVER-COMMAND (the caller puts `setpriv ...` in front of it to run
the server as another user) with pipes on its stdin and stdout, reads a
script from its own stdin, one step a line, and prints what happened as
KEY=JSON lines on stdout (flush after each), for the shell to check:

  send KEY METHOD [PARAMS-JSON]  a request with id "KEY" (a string); no wait
  call KEY METHOD [PARAMS-JSON]  the same, then wait for its response
  wait KEY...                    wait for the responses of earlier sends
  notify METHOD [PARAMS-JSON]    a notification (no id)
  raw KEY TEXT                   send TEXT as one line as it is, then wait for
                                 the next response that no send/call claims
                                 (the answer to a line whose id is unknown)
  big KEY NBYTES                 a valid `info` request (id 9999) padded with
                                 a string parameter to one line of NBYTES
                                 bytes, then wait like raw
  strays KEY                     print KEY.count: responses nobody claimed so
                                 far (e.g. answers to notifications), and drop them
  mark NAME / since NAME         start a clock / print NAME.elapsedMs
  sleep SECONDS
  sync NAME                      print sync="NAME", wait for the file DIR/NAME
  pid                            print pid=N (the server's pid)
  signal NAME                    send signal NAME (e.g. KILL) to the server
  close                          close the server's stdin, wait for it to exit
                                 (print exit=RC; -N for a signal)
  exited                         wait for the server to exit by itself, stdin
                                 still open (print exited=RC, or exited=null
                                 after the timeout)
  # ...                          a comment

A response is printed flattened: KEY.id, KEY.result.FIELD..., or
KEY.error.code, KEY.error.message, KEY.error.data.errno; lists get .0, .1, ...
and strings and lists a .len; plus KEY.order (the response's rank among all
responses, from 1) and KEY.ms (from sending to the response).  A wait that
times out prints KEY.timeout=true.  At the end: unexpected=JSON for every
response nobody claimed, then done=true.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time


def out(key, value):
    sys.stdout.write(key + "=" + json.dumps(value, sort_keys=True) + "\n")
    sys.stdout.flush()


def flat(key, value):
    out(key, value)
    if isinstance(value, dict):
        for k, v in value.items():
            flat(key + "." + k, v)
    elif isinstance(value, list):
        out(key + ".len", len(value))
        for i, v in enumerate(value):
            flat("%s.%d" % (key, i), v)
    elif isinstance(value, str):
        out(key + ".len", len(value))


class Driver:
    def __init__(self, cmd, sync_dir, timeout):
        self.sync_dir = sync_dir
        self.timeout = timeout
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lock = threading.Condition()
        self.pending = {}  # KEY -> send time
        self.got = {}  # KEY -> (response, arrival time, order)
        self.strays = []  # (response, arrival time, order)
        self.order = 0
        self.eof = False
        self.marks = {}
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for line in self.proc.stdout:
            now = time.monotonic()
            try:
                msg = json.loads(line)
            except ValueError:
                msg = {"notJson": line.decode("utf-8", "replace")}
            with self.lock:
                self.order += 1
                rid = msg.get("id") if isinstance(msg, dict) else None
                if isinstance(rid, str) and rid in self.pending and rid not in self.got:
                    self.got[rid] = (msg, now, self.order)
                else:
                    self.strays.append((msg, now, self.order))
                self.lock.notify_all()
        with self.lock:
            self.eof = True
            self.lock.notify_all()

    def write(self, key, data):
        try:
            self.proc.stdin.write(data + b"\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, ValueError, OSError) as e:
            out(key + ".senderror", str(e))
            return False

    def send(self, key, method, params):
        req = {"jsonrpc": "2.0", "id": key, "method": method}
        if params is not None:
            req["params"] = params
        with self.lock:
            self.pending[key] = time.monotonic()
        self.write(key, json.dumps(req).encode())

    def report(self, key, msg, at, order, sent):
        flat(key, msg)
        out(key + ".order", order)
        if sent is not None:
            out(key + ".ms", round((at - sent) * 1000))

    def wait(self, key):
        deadline = time.monotonic() + self.timeout
        with self.lock:
            while key not in self.got and not self.eof and time.monotonic() < deadline:
                self.lock.wait(0.05)
            entry = self.got.get(key)
            sent = self.pending.get(key)
        if entry is None:
            out(key + ".timeout", True)
            return
        self.report(key, entry[0], entry[1], entry[2], sent)

    def wait_stray(self, key, sent):
        deadline = time.monotonic() + self.timeout
        with self.lock:
            while not self.strays and not self.eof and time.monotonic() < deadline:
                self.lock.wait(0.05)
            entry = self.strays.pop(0) if self.strays else None
        if entry is None:
            out(key + ".timeout", True)
            return
        self.report(key, entry[0], entry[1], entry[2], sent)

    def step(self, line):
        words = line.split(None, 1)
        if not words or words[0].startswith("#"):
            return
        op = words[0]
        rest = words[1] if len(words) > 1 else ""
        if op in ("send", "call"):
            parts = rest.split(None, 2)
            params = json.loads(parts[2]) if len(parts) > 2 else None
            self.send(parts[0], parts[1], params)
            if op == "call":
                self.wait(parts[0])
        elif op == "wait":
            for key in rest.split():
                self.wait(key)
        elif op == "notify":
            parts = rest.split(None, 1)
            req = {"jsonrpc": "2.0", "method": parts[0]}
            if len(parts) > 1:
                req["params"] = json.loads(parts[1])
            self.write("notify", json.dumps(req).encode())
        elif op == "raw":
            key, text = (rest.split(None, 1) + [""])[:2]
            sent = time.monotonic()
            if self.write(key, text.encode()):
                self.wait_stray(key, sent)
        elif op == "big":
            key, size = rest.split()
            head = b'{"jsonrpc":"2.0","id":9999,"method":"info","params":{"pad":"'
            tail = b'"}}'
            pad = int(size) - len(head) - len(tail)
            sent = time.monotonic()
            if self.write(key, head + b"x" * pad + tail):
                self.wait_stray(key, sent)
        elif op == "strays":
            with self.lock:
                n = len(self.strays)
                dropped = [s[0] for s in self.strays]
                self.strays = []
            out(rest.strip() + ".count", n)
            for msg in dropped:
                out(rest.strip() + ".stray", msg)
        elif op == "mark":
            self.marks[rest.strip()] = time.monotonic()
        elif op == "since":
            name = rest.strip()
            out(name + ".elapsedMs", round((time.monotonic() - self.marks[name]) * 1000))
        elif op == "sleep":
            time.sleep(float(rest))
        elif op == "sync":
            name = rest.strip()
            out("sync", name)
            path = os.path.join(self.sync_dir or ".", name)
            deadline = time.monotonic() + 120
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.05)
        elif op == "pid":
            out("pid", self.proc.pid)
        elif op == "signal":
            try:
                self.proc.send_signal(getattr(signal, "SIG" + rest.strip()))
            except OSError as e:
                out("signal.error", str(e))
        elif op == "close":
            self.close()
        elif op == "exited":
            try:
                out("exited", self.proc.wait(self.timeout))
            except subprocess.TimeoutExpired:
                out("exited", None)
        else:
            raise SystemExit("rpc-driver: unknown step: " + line)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            rc = self.proc.wait(self.timeout)
        except subprocess.TimeoutExpired:
            out("close.timeout", True)
            self.proc.kill()
            rc = self.proc.wait()
        out("exit", rc)
        # Let the reader see the end of the server's output.
        deadline = time.monotonic() + 5
        with self.lock:
            while not self.eof and time.monotonic() < deadline:
                self.lock.wait(0.05)


def main():
    args = sys.argv[1:]
    sync_dir = None
    timeout = 30.0
    while args and args[0] != "--":
        if args[0] == "--sync-dir":
            sync_dir = args[1]
            args = args[2:]
        elif args[0] == "--timeout":
            timeout = float(args[1])
            args = args[2:]
        else:
            raise SystemExit("usage: rpc-driver.py [--sync-dir DIR] [--timeout S] -- COMMAND...")
    if not args or len(args) < 2:
        raise SystemExit("usage: rpc-driver.py [--sync-dir DIR] [--timeout S] -- COMMAND...")
    script = sys.stdin.read().splitlines()
    d = Driver(args[1:], sync_dir, timeout)
    try:
        for line in script:
            d.step(line.strip())
    finally:
        if d.proc.poll() is None:
            d.close()
        with d.lock:
            for msg, _, _ in d.strays:
                out("unexpected", msg)
        out("done", True)


if __name__ == "__main__":
    main()
