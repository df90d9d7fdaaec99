"""A client for `jailrun serve` (JSON-RPC 2.0 over stdio, one object a line).

Standard library only, Python 3.7 or later.

    from jailrun_client import JailrunClient, JailrunError

    with JailrunClient(policy="strict") as jail:
        r = jail.exec("make test", timeout_ms=600000)
        print(r["exitCode"], r["stdout"])
        jail.write_file("notes/plan.md", "# plan\\n", create_dirs=True)
        print(jail.read_file("notes/plan.md"))

Every method sends one request and waits for its response; requests may be
made from several threads at once (the server answers them concurrently,
and a reader thread hands each response to its caller by id).  A JSON-RPC
error response raises JailrunError; a server that goes away raises
JailrunConnectionError (a JailrunError whose code is None).
"""

import base64
import itertools
import json
import subprocess
import threading
import time

__all__ = ["JailrunClient", "JailrunError", "JailrunConnectionError",
           "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS",
           "NOT_SUPPORTED", "FILE_ERROR", "REFUSED", "CANCELLED"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
NOT_SUPPORTED = -32000
FILE_ERROR = -32001
REFUSED = -32002
CANCELLED = -32800


class JailrunError(Exception):
    """A JSON-RPC error response: code (int), message (str), data (or None)."""

    def __init__(self, code, message, data=None):
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    @property
    def errno(self):
        """The errno name of a file error (data.errno, e.g. "ENOENT"), or None."""
        if isinstance(self.data, dict):
            return self.data.get("errno")
        return None

    def __str__(self):
        if self.code is None:
            return self.message
        s = "%s (%d)" % (self.message, self.code)
        if self.data is not None:
            s += " " + json.dumps(self.data)
        return s


class JailrunConnectionError(JailrunError):
    """The server closed its output, or a request could not be sent."""

    def __init__(self, message):
        super().__init__(None, message, None)


class _Pending:
    __slots__ = ("event", "response", "method")

    def __init__(self, method):
        self.event = threading.Event()
        self.response = None
        self.method = method


def _drop_none(d):
    return {k: v for k, v in d.items() if v is not None}


class JailrunClient:
    """A connection to one `jailrun serve`.

    By default starts `JAILRUN serve [--session SESSION] [--policy POLICY]
    [ARGS...]` as a subprocess (popen_kwargs go to subprocess.Popen: cwd,
    env, stderr, ...; the server's workspace is its working directory).
    Given reader and writer (binary file objects: the server's output and
    input), it talks over those instead and starts nothing.

    timeout: default seconds to wait for a response (None: forever);
    every method also takes its own through call().
    """

    def __init__(self, jailrun="jailrun", policy=None, session=None, args=(),
                 reader=None, writer=None, timeout=None, **popen_kwargs):
        self.timeout = timeout
        self.proc = None
        self.unmatched = []
        """Responses that matched no pending request (e.g. a parse error's, id null)."""
        self._ids = itertools.count(1)
        self._lock = threading.Lock()          # pending table and id allocation
        self._write_lock = threading.Lock()    # one line at a time on the pipe
        self._pending = {}
        self._closed = None                    # reason, once the server is gone
        if (reader is None) != (writer is None):
            raise ValueError("give both reader and writer, or neither")
        if reader is None:
            argv = [jailrun, "serve"]
            if session is not None:
                argv += ["--session", session]
            if policy is not None:
                argv += ["--policy", policy]
            argv += list(args)
            self.argv = argv
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         bufsize=0, **popen_kwargs)
            reader, writer = self.proc.stdout, self.proc.stdin
        else:
            self.argv = None
        self._reader = reader
        self._writer = writer
        self._thread = threading.Thread(target=self._read_loop, name="jailrun-client-reader",
                                        daemon=True)
        self._thread.start()

    # -- the connection -----------------------------------------------------

    def _read_loop(self):
        reason = "jailrun serve closed its output"
        try:
            while True:
                line = self._reader.readline()
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line.decode("utf-8", "replace"))
                except ValueError:
                    self.unmatched.append({"invalid": line.decode("utf-8", "replace")})
                    continue
                self._dispatch(msg)
        except (OSError, ValueError) as e:
            reason = "reading from jailrun serve: %s" % e
        finally:
            self._fail_all(reason)

    def _dispatch(self, msg):
        if not isinstance(msg, dict) or "id" not in msg:
            self.unmatched.append(msg)        # a notification, or garbage
            return
        with self._lock:
            pending = self._pending.get(msg["id"]) if isinstance(msg["id"], (int, str)) else None
        if pending is None:
            self.unmatched.append(msg)
            return
        pending.response = msg
        pending.event.set()

    def _fail_all(self, reason):
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=1)
                reason += " (exit status %d)" % rc
            except subprocess.TimeoutExpired:
                pass
        with self._lock:
            self._closed = reason
            pending = list(self._pending.values())
        for p in pending:
            p.event.set()

    def _send(self, obj):
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        self.send_raw(data)

    def send_raw(self, data):
        """Writes bytes as they are to the server (for protocol tests)."""
        with self._write_lock:
            try:
                self._writer.write(data)
                self._writer.flush()
            except (OSError, ValueError) as e:
                raise JailrunConnectionError("writing to jailrun serve: %s" % e) from None

    def call_async(self, method, params=None):
        """Sends a request and returns its id at once; wait(id) gets the result."""
        with self._lock:
            if self._closed is not None:
                raise JailrunConnectionError(self._closed)
            rid = next(self._ids)
            self._pending[rid] = _Pending(method)
        req = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            req["params"] = params
        try:
            self._send(req)
        except JailrunError:
            with self._lock:
                self._pending.pop(rid, None)
            raise
        return rid

    def wait(self, request_id, timeout=None):
        """The result of request_id (from call_async); raises JailrunError for an
        error response, TimeoutError when none comes within timeout seconds
        (default: the client's; the request stays pending)."""
        with self._lock:
            pending = self._pending.get(request_id)
        if pending is None:
            raise KeyError("no pending request %r" % (request_id,))
        if timeout is None:
            timeout = self.timeout
        if not pending.event.wait(timeout):
            raise TimeoutError("no response to %s (id %r) within %s s"
                               % (pending.method, request_id, timeout))
        with self._lock:
            self._pending.pop(request_id, None)
            closed = self._closed
        msg = pending.response
        if msg is None:
            raise JailrunConnectionError(closed or "jailrun serve went away")
        if "error" in msg:
            err = msg["error"] if isinstance(msg["error"], dict) else {}
            raise JailrunError(err.get("code"), err.get("message", ""), err.get("data"))
        return msg.get("result")

    def call(self, method, params=None, timeout=None):
        """Sends a request and waits for its result (see wait)."""
        return self.wait(self.call_async(method, params), timeout)

    def notify(self, method, params=None):
        """Sends a notification (no id, no response)."""
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def cancel(self, request_id, notification=False):
        """Cancels a running exec: the request's processes are killed and it ends
        with JailrunError code -32800.  Sends `cancel {id}` and returns its
        result, or with notification=True sends `$/cancelRequest` and returns None."""
        if notification:
            self.notify("$/cancelRequest", {"id": request_id})
            return None
        return self.call("cancel", {"id": request_id})

    def close(self, timeout=10):
        """Asks the server to shut down, closes its input and waits for it to exit
        (killing it after timeout seconds).  Returns its exit status, or None
        when connected over given pipes.  Safe to call twice."""
        if self._closed is None:
            try:
                self.shutdown(timeout=timeout)
            except (JailrunError, TimeoutError):
                pass
        try:
            self._writer.close()
        except (OSError, ValueError):
            pass
        rc = None
        if self.proc is not None:
            try:
                rc = self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
        self._thread.join(timeout)
        return rc

    @property
    def returncode(self):
        """The server's exit status once it exited, else None."""
        return None if self.proc is None else self.proc.poll()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- methods ------------------------------------------------------------

    def exec(self, command=None, argv=None, cwd=None, env=None, stdin=None, timeout_ms=None,
             max_output_bytes=None, timeout=None):
        """Runs a command in the jail: a shell command line (/bin/sh -c) or an argv
        list, exactly one.  env is added to the session's environment, then
        scrubbed by the policy.  Returns {exitCode, signal, stdout, stderr,
        durationMs, truncated, timedOut}; a non-zero exit is not an error."""
        return self.call("exec", self.exec_params(command, argv, cwd, env, stdin, timeout_ms,
                                                  max_output_bytes), timeout)

    def exec_async(self, command=None, argv=None, cwd=None, env=None, stdin=None,
                   timeout_ms=None, max_output_bytes=None):
        """exec without waiting: returns the request id (for wait and cancel)."""
        return self.call_async("exec", self.exec_params(command, argv, cwd, env, stdin,
                                                        timeout_ms, max_output_bytes))

    @staticmethod
    def exec_params(command=None, argv=None, cwd=None, env=None, stdin=None, timeout_ms=None,
                    max_output_bytes=None):
        """The params object of an exec request (None arguments left out)."""
        return _drop_none({"command": command,
                           "argv": list(argv) if argv is not None else None,
                           "cwd": cwd, "env": env, "stdin": stdin, "timeoutMs": timeout_ms,
                           "maxOutputBytes": max_output_bytes})

    def read_file(self, path, binary=False, max_bytes=None):
        """The content of a file: str (UTF-8), or bytes with binary=True.  Cut at
        max_bytes; read_file_info says whether it was."""
        r = self.read_file_info(path, binary, max_bytes)
        return base64.b64decode(r["contentBase64"]) if binary else r["content"]

    def read_file_info(self, path, binary=False, max_bytes=None):
        """readFile's whole result: {content | contentBase64, size, truncated}."""
        return self.call("readFile", _drop_none({"path": path,
                                                 "encoding": "base64" if binary else None,
                                                 "maxBytes": max_bytes}))

    def write_file(self, path, data, mode=None, create_dirs=False):
        """Writes data (str as UTF-8, or bytes) to path, replacing the file; mode
        (e.g. 0o755) applies to a new file.  Returns the number of bytes written."""
        params = {"path": path}
        if isinstance(data, str):
            params["content"] = data
        elif isinstance(data, (bytes, bytearray, memoryview)):
            params["contentBase64"] = base64.b64encode(bytes(data)).decode("ascii")
        else:
            raise TypeError("data must be str or bytes, not %s" % type(data).__name__)
        if mode is not None:
            params["mode"] = mode
        if create_dirs:
            params["createDirs"] = True
        return self.call("writeFile", params)["bytesWritten"]

    def stat(self, path):
        """{size, isDirectory, isFile, isSymlink, mode, mtimeMs} (a symlink itself
        is described, not its target)."""
        return self.call("stat", {"path": path})

    def readdir(self, path="."):
        """The entries of a directory, sorted by name: [{name, isDirectory, isFile,
        isSymlink}]."""
        return self.call("readdir", {"path": path})["entries"]

    def exists(self, path):
        """Whether path exists (True or False)."""
        return self.call("exists", {"path": path})["exists"]

    def mkdir(self, path, recursive=False):
        """Makes a directory (and its missing parents with recursive=True)."""
        self.call("mkdir", _drop_none({"path": path, "recursive": recursive or None}))

    def rm(self, path, recursive=False, force=False):
        """Removes a file, or a directory tree with recursive=True; force=True
        ignores a missing path."""
        self.call("rm", _drop_none({"path": path, "recursive": recursive or None,
                                    "force": force or None}))

    def glob(self, pattern, cwd=None):
        """Paths matching pattern (`**` matches any depth), relative to cwd
        (default: the workspace), sorted."""
        return self.call("glob", _drop_none({"pattern": pattern, "cwd": cwd}))["paths"]

    def grep(self, pattern, path=None, include=None, ignore_case=False, max_results=None):
        """Lines matching a POSIX extended regex under path (default "."), in files
        whose names match the glob include.  Returns {matches: [{path, line,
        text}], truncated}."""
        return self.call("grep", _drop_none({"pattern": pattern, "path": path,
                                             "include": include,
                                             "ignoreCase": ignore_case or None,
                                             "maxResults": max_results}))

    def info(self):
        """{version, session, policy: {name, sha256}, workspace, startedAt}."""
        return self.call("info", {})

    def shutdown(self, timeout=None):
        """Asks the server to exit (a private session stops with it)."""
        return self.call("shutdown", {}, timeout)


if __name__ == "__main__":
    import sys
    # python3 jailrun_client.py [JAILRUN-SERVE-ARGS...]: a smoke test.
    with JailrunClient(args=sys.argv[1:], timeout=60) as c:
        t = time.monotonic()
        print(json.dumps(c.info()))
        print(json.dumps(c.exec("echo hello from the jail")))
        print("%.1f ms" % ((time.monotonic() - t) * 1000))
