#!/bin/sh
# contrib/python/jailrun_client.py against the real `jailrun serve`, end to
# end: each case writes a Python driver that uses the client and prints one
# line KEY=JSON per result (KEY.error, KEY.message, KEY.data, KEY.errtype
# for an exception), and the checks below read those lines.  Drivers run
# as the case's user in the workspace, with the fixture HOME; a driver can
# stop at `sync("NAME")` until the shell has looked at the host's processes
# and says `release NAME`.
. "$JR_SRCDIR/tests/integration/lib.sh"

PYDIR=$JR_TOP/python
mkdir -p "$PYDIR"
cp "$JR_SRCDIR/contrib/python/jailrun_client.py" "$PYDIR/jailrun_client.py"
cat >"$PYDIR/jrtest.py" <<'EOF'
"""Helpers for the drivers of python-client.sh."""
import json
import os
import sys
import time

from jailrun_client import JailrunClient, JailrunError

WS = os.environ["JR_WS"]
HOME = os.environ["HOME"]
BIN = os.environ["JR_BIN"]
CASE_DIR = os.path.dirname(WS)


def _plain(v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("latin-1")
    return v


def out(key, value):
    """One line KEY=JSON on stdout."""
    print(key + "=" + json.dumps(_plain(value), sort_keys=True, default=repr), flush=True)


def step(key, fn, *args, **kwargs):
    """Calls fn; prints its result as KEY=JSON (and KEY.FIELD=JSON for each field of a
    dict, recursively), or KEY.error/.message/.data/.errtype/.errno for an exception.  Returns the
    result, or None."""
    try:
        r = fn(*args, **kwargs)
    except JailrunError as e:
        out(key + ".error", e.code)
        out(key + ".message", e.message)
        out(key + ".data", e.data)
        out(key + ".errtype", type(e).__name__)
        out(key + ".errno", e.errno)
        return None
    except Exception as e:  # the client itself failed: show it
        out(key + ".error", "exception")
        out(key + ".message", "%s: %s" % (type(e).__name__, e))
        out(key + ".errtype", type(e).__name__)
        return None
    _flat(key, r)
    return r


def _flat(key, value):
    out(key, value)
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(key + "." + k, v)


def client(policy="strict", **kwargs):
    """A JailrunClient for the binary under test, 60 s per request at most."""
    kwargs.setdefault("timeout", 60)
    return JailrunClient(BIN, policy=policy, **kwargs)


def sync(name, timeout=60):
    """Prints sync="NAME" and waits for the shell's `release NAME`."""
    out("sync", name)
    path = os.path.join(CASE_DIR, "sync", name)
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            out("sync.timeout", name)
            return
        time.sleep(0.05)
EOF
chmod -R a+rX "$PYDIR"
VERSION=$("$JR_BIN" --version | sed -n 's/^jailrun //p')

# Runs the driver read from stdin as the case's user, in the background:
# its stdout (the KEY=JSON lines) goes to $OUT, its stderr and the server's
# to $ERR.  py_wait waits for it and sets RC.  PY_ENV="A=1 B=2" (set on a
# line of its own: bash exports a prefix assignment to a function call)
# adds to the driver's environment, once.
py_background() {
	case_dir=$(dirname "$WS")
	SYNC=$case_dir/sync
	rm -rf "$SYNC"
	mkdir -p "$SYNC"
	chmod 755 "$SYNC"
	drv=$case_dir/driver.py
	cat >"$drv"
	chmod 644 "$drv"
	# shellcheck disable=SC2086 # PY_ENV: NAME=VALUE words
	(cd "$WS" && as_user env HOME="$FIXHOME" JR_BIN="$JR_BIN" JR_WS="$WS" \
		PYTHONPATH="$PYDIR" PYTHONDONTWRITEBYTECODE=1 ${PY_ENV:-} \
		timeout -k 5 180 python3 "$drv") </dev/null >"$OUT" 2>"$ERR" &
	PY_PID=$!
	PY_ENV=
}

py_wait() {
	wait "$PY_PID"
	RC=$?
}

py() {
	py_background
	py_wait
}

# Waits (up to 60 s) for the driver to reach sync("NAME").
wait_sync() {
	i=0
	while [ $i -lt 600 ]; do
		grep -qxF "sync=\"$1\"" "$OUT" && return 0
		kill -0 "$PY_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -qxF "sync=\"$1\"" "$OUT"
}

release() { touch "$SYNC/$1"; }

. "$JR_SRCDIR/tests/integration/kv.sh"
# KEY ended in a JSON-RPC error with code CODE.
error_is() { has "$1.error" "$2"; }
# KEY ended in a JSON-RPC error of jailrun's own (-32000 to -32099).
failed() { like "$1.error" '-320[0-9][0-9]'; }
# KEY succeeded (a result line, no error line).
succeeded() { grep -q "^$(keyre "$1")=" "$OUT" && ! grep -q "^$(keyre "$1")\.error=" "$OUT" || { _got "$1"; return 1; }; }

# The pid namespace of the jail, as the driver printed it (pid:[N]).
jail_ns() { val ns | tr -d '"'; }

# Pids of host processes in pid namespace NS whose command line starts
# with TEXT (TEXT empty: every process in NS).
jail_pids_with() {
	for p in $(pids_with "$2"); do
		[ "$(readlink "/proc/$p/ns/pid" 2>/dev/null)" = "$1" ] && echo "$p"
	done
	return 0
}

jail_gone_within_5s() {
	i=0
	while [ $i -lt 50 ]; do
		[ -z "$(jail_pids_with "$1" "$2")" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

ns_ok() { case $1 in "pid:["[0-9]*"]") return 0 ;; esac; return 1; }

# Waits up to 5 s for the state directory of session NAME to be gone
# (either place the spec allows; NAME must be known).
state_gone_within_5s() {
	[ -n "$1" ] || return 1
	i=0
	while [ $i -lt 50 ]; do
		if [ ! -e "/tmp/jailrun-$CASE_UID/$1" ] &&
			{ [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -e "$XDG_RUNTIME_DIR/jailrun/$1" ]; }; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "#   left: $(ls -d "/tmp/jailrun-$CASE_UID/$1" "${XDG_RUNTIME_DIR:-/nonexistent}/jailrun/$1" 2>/dev/null)"
	return 1
}

case_exec() {
	mkdir "$WS/sub"
	chown "$CASE_UID" "$WS/sub"
	PY_ENV="JR_HOST_API_TOKEN=host-secret-value JR_HOST_PLAIN=yes"
	py <<'EOF'
from jrtest import *
c = client()
step("basic", c.exec, "echo out; echo err >&2; exit 3")
step("argv", c.exec, argv=["printf", "%s|", "a b", "c"])
step("stdin", c.exec, "tr a-z A-Z", stdin="hello jail")
step("env", c.exec,
     'echo "plain=${JR_PLAIN-unset} token=${JR_TEST_TOKEN-unset}'
     ' host=${JR_HOST_API_TOKEN-unset} hostplain=${JR_HOST_PLAIN-unset}"',
     env={"JR_PLAIN": "visible", "JR_TEST_TOKEN": "hunter2"})
step("envlower", c.exec, "env", env={"my_session_token": "lowercase-secret", "JR_MARK": "m1"})
step("cwd", c.exec, "pwd", cwd="sub")
step("signal", c.exec, "kill -TERM $$")
r = step("trunc", c.exec, "head -c 5000 /dev/zero | tr '\\0' x; echo done >&2",
         max_output_bytes=100)
out("trunc.stdoutLength", len(r["stdout"]) if r else None)
step("utf8", c.exec, "printf '\\377ok\\n'")
step("both", c.exec, "true", argv=["true"])
step("neither", c.exec)
step("made", c.exec, "echo made-inside > made.txt")
step("close", c.close)
EOF
	check "the driver ran to its end" test "$RC" -eq 0
	check "exec: exit code 3 is a result, not an error" has basic.exitCode 3
	check "exec: stdout" has basic.stdout '"out\n"'
	check "exec: stderr" has basic.stderr '"err\n"'
	check "exec: signal null, timedOut and truncated false" \
		lines basic.signal=null basic.timedOut=false basic.truncated=false
	check "exec: durationMs is a number" like basic.durationMs '[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'
	check "exec argv: each word one argument, no shell" has argv.stdout '"a b|c|"'
	check "exec argv: exit code 0" has argv.exitCode 0
	check "exec stdin: the command reads it" has stdin.stdout '"HELLO JAIL"'
	check "exec env: a plain variable passes, a *_TOKEN one passed in env is dropped, and so is one of the server's" \
		has env.stdout '"plain=visible token=unset host=unset hostplain=yes\n"'
	check "exec env: scrubbing is case-insensitive (my_session_token)" lacks "$OUT" lowercase-secret
	check "exec env: the env command ran (control)" like envlower.stdout '".*JR_MARK=m1.*"'
	check "the server's *_API_TOKEN never shows up" lacks "$OUT" host-secret-value
	check "exec cwd: relative to the workspace" has cwd.stdout "\"$WS/sub\\n\""
	check "exec: killed by a signal gives exitCode null" has signal.exitCode null
	check "exec: and signal \"SIGTERM\"" has signal.signal '"SIGTERM"'
	check "exec maxOutputBytes 100: stdout cut at 100 bytes" has trunc.stdoutLength 100
	check "exec maxOutputBytes: truncated true" has trunc.truncated true
	check "exec maxOutputBytes: exit code 0, stderr whole" \
		lines trunc.exitCode=0 'trunc.stderr="done\n"'
	check "exec: invalid UTF-8 becomes U+FFFD" has utf8.stdout '"\ufffdok\n"'
	check "exec with both command and argv: -32602" error_is both -32602
	check "exec with neither: -32602" error_is neither -32602
	check "a file written by exec reaches the host" test "$(cat "$WS/made.txt" 2>/dev/null)" = made-inside
	check "owned by the caller" test "$(stat -c %u "$WS/made.txt" 2>/dev/null)" = "$CASE_UID"
	check "close: shutdown, and the server exits 0" has close 0
}

case_timeout() {
	py_background <<'EOF'
from jrtest import *
c = client()
step("ns", lambda: c.exec("readlink /proc/self/ns/pid")["stdout"].strip())
step("info", c.info)
t = time.monotonic()
step("slow", c.exec, "sleep 100", timeout_ms=500)
out("slow.seconds", round(time.monotonic() - t, 1))
out("slow.fast", time.monotonic() - t < 10)
step("tree", c.exec, "sleep 100 & sleep 100 & echo started; wait", timeout_ms=800)
sync("timed-out")
step("alive", c.exec, "echo still serving")
step("close", c.close)
EOF
	if wait_sync timed-out; then :; fi
	ns=$(jail_ns)
	check "the jail's pid namespace is known" ns_ok "$ns"
	check "timeoutMs 500: timedOut true" has slow.timedOut true
	check "signal SIGKILL, exitCode null" \
		lines 'slow.signal="SIGKILL"' slow.exitCode=null
	check "the response came at once (< 10 s, not after sleep 100)" has slow.fast true
	check "a tree of background sleeps timed out too" has tree.timedOut true
	check "output before the timeout is kept" has tree.stdout '"started\n"'
	check "no sleep 100 of the jail is left" jail_gone_within_5s "$ns" "sleep 100"
	release timed-out
	py_wait
	check "the server keeps serving after a timeout" has alive.stdout '"still serving\n"'
	check "the driver ran to its end, the server exited 0" has close 0
	check "after shutdown no process of the private session is left" jail_gone_within_5s "$ns" ""
	check "nor its state directory" state_gone_within_5s "$(val info.session | tr -d '"')"
}

case_cancel() {
	py_background <<'EOF'
from jrtest import *
c = client()
step("ns", lambda: c.exec("readlink /proc/self/ns/pid")["stdout"].strip())
rid = c.exec_async("sleep 100")
sync("running")
t = time.monotonic()
step("cancel", c.cancel, rid)
step("cancelled", c.wait, rid)
out("cancelled.fast", time.monotonic() - t < 5)
sync("cancelled")
rid = c.exec_async(argv=["sh", "-c", "sleep 100 & sleep 100; echo not-cancelled"])
sync("running2")
c.cancel(rid, notification=True)
step("cancelled2", c.wait, rid)
sync("cancelled2")
step("alive", c.exec, "echo still serving")
step("close", c.close)
EOF
	wait_sync running
	ns=$(jail_ns)
	check "the jail's pid namespace is known" ns_ok "$ns"
	i=0
	while [ $i -lt 50 ] && [ -z "$(jail_pids_with "$ns" "sleep 100")" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "the exec's sleep 100 runs in the jail" test -n "$(jail_pids_with "$ns" "sleep 100")"
	release running
	wait_sync cancelled
	check "cancel {id}: the cancel request itself succeeds" succeeded cancel
	check "the cancelled exec ends with error -32800" error_is cancelled -32800
	check "message \"cancelled\"" like cancelled.message '".*cancelled.*"'
	check "at once (< 5 s)" has cancelled.fast true
	check "no sleep 100 of that jail remains" jail_gone_within_5s "$ns" "sleep 100"
	release cancelled
	wait_sync running2
	i=0
	while [ $i -lt 50 ] && [ "$(jail_pids_with "$ns" "sleep 100" | wc -l)" -lt 2 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "a second exec runs two sleep 100" test "$(jail_pids_with "$ns" "sleep 100" | wc -l)" -eq 2
	release running2
	wait_sync cancelled2
	check "\$/cancelRequest (a notification) cancels it: -32800" error_is cancelled2 -32800
	check "its whole process tree is gone, background sleep included" jail_gone_within_5s "$ns" "sleep 100"
	release cancelled2
	py_wait
	check "the server keeps serving after a cancel" has alive.stdout '"still serving\n"'
	check "and exits 0 on shutdown" has close 0
	check "after shutdown no process of the private session is left" jail_gone_within_5s "$ns" ""
}

case_server_killed() {
	py_background <<'EOF'
from jrtest import *
import signal
c = client()
step("ns", lambda: c.exec("readlink /proc/self/ns/pid")["stdout"].strip())
step("info", c.info)
rid = c.exec_async("sleep 100")
sync("running")
c.proc.send_signal(signal.SIGKILL)
step("pending", c.wait, rid)
step("after", c.info)
out("returncode", c.proc.wait())
EOF
	wait_sync running
	ns=$(jail_ns)
	check "the jail's pid namespace is known" ns_ok "$ns"
	i=0
	while [ $i -lt 50 ] && [ -z "$(jail_pids_with "$ns" "sleep 100")" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "the exec's sleep 100 runs in the jail" test -n "$(jail_pids_with "$ns" "sleep 100")"
	release running
	py_wait
	check "the serve process died of SIGKILL" has returncode -9
	check "a request pending then raises JailrunConnectionError" has pending.errtype '"JailrunConnectionError"'
	check "and so does a later one" has after.errtype '"JailrunConnectionError"'
	check "SIGKILL of serve leaves no process of its private session" jail_gone_within_5s "$ns" ""
	name=$(val info.session | tr -d '"')
	check "nor its state directory" state_gone_within_5s "$name"
	# Whatever was left, do not litter the host with it.
	case $name in serve-[0-9]*) rm -rf "/tmp/jailrun-$CASE_UID/$name" ;; esac
}

case_files() {
	mkdir -p "$WS/tree/a"
	echo b >"$WS/tree/b.txt"
	echo h >"$WS/tree/.hidden"
	ln -s b.txt "$WS/tree/c"
	chown -R "$CASE_UID:$CASE_UID" "$WS/tree"
	echo host-only-content >"$JR_TOP/host-visible-file"
	chmod 644 "$JR_TOP/host-visible-file"
	mark=jailrun-pyclient-$JR_MODE-$$
	PY_ENV="MARK=$mark HOSTFILE=$JR_TOP/host-visible-file"
	py <<'EOF'
from jrtest import *
c = client()
step("w1", c.write_file, "notes/a.txt", "h\u00e9llo\n", create_dirs=True)
try:
    out("w1.host", open(os.path.join(WS, "notes/a.txt"), "rb").read() == b"h\xc3\xa9llo\n")
except OSError as e:
    out("w1.host", str(e))
step("wnodir", c.write_file, "missing/x.txt", "x")
step("r1", c.read_file, "notes/a.txt")
step("r1abs", c.read_file, WS + "/notes/a.txt")
step("rinfo", c.read_file_info, "notes/a.txt")
c.write_file("digits.txt", "0123456789")
step("rmax", c.read_file_info, "digits.txt", False, 4)
blob = bytes(range(256)) * 4 + b"\x00\xff\xfe"
with open(os.path.join(CASE_DIR, "blob.expected"), "wb") as f:
    f.write(blob)
step("wbin", c.write_file, "bin/blob", blob, create_dirs=True)
back = c.read_file("bin/blob", binary=True)
out("bin.roundtrip", back == blob)
step("wmode", c.write_file, "run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
step("runit", c.exec, "./run.sh")
os.symlink("notes/a.txt", os.path.join(WS, "link"))
st = step("stfile", c.stat, "notes/a.txt")
if st:
    host = os.stat(os.path.join(WS, "notes/a.txt"))
    out("stfile.perm", oct(st["mode"] & 0o7777))
    out("stfile.mtimeOk", abs(st["mtimeMs"] - host.st_mtime * 1000) < 2000)
step("stdir", c.stat, "notes")
step("stlink", c.stat, "link")
step("rlink", c.read_file, "link")
rd = step("rd", c.readdir, "tree")
if rd:
    out("rd.names", [e["name"] for e in rd])
    by = {e["name"]: e for e in rd}
    out("rd.kinds", {n: [k for k in ("isDirectory", "isFile", "isSymlink") if e.get(k)]
                     for n, e in by.items()})
step("exyes", c.exists, "notes/a.txt")
step("exno", c.exists, "notes/nope")
step("exdir", c.exists, "tree/a")
step("mkrec", c.mkdir, "d1/d2/d3", recursive=True)
out("mkrec.host", os.path.isdir(os.path.join(WS, "d1/d2/d3")))
step("mknoparent", c.mkdir, "e1/e2")
step("mkexists", c.mkdir, "notes")
step("mkone", c.mkdir, "e1")
out("mkone.host", os.path.isdir(os.path.join(WS, "e1")))
step("rmfile", c.rm, "digits.txt")
out("rmfile.host", os.path.exists(os.path.join(WS, "digits.txt")))
step("rmnonempty", c.rm, "d1")
out("rmnonempty.host", os.path.isdir(os.path.join(WS, "d1/d2/d3")))
step("rmrec", c.rm, "d1", recursive=True)
out("rmrec.host", os.path.exists(os.path.join(WS, "d1")))
step("rmmissing", c.rm, "nope.txt")
step("rmforce", c.rm, "nope.txt", force=True)
step("wetc", c.write_file, "/etc/" + os.environ["MARK"], "x")
step("rshadow", c.read_file, "/etc/shadow")
step("rhostonly", c.read_file, os.environ["HOSTFILE"])
step("overwrite", c.write_file, "notes/a.txt", "short")
step("close", c.close)
EOF
	check "the driver ran to its end" has close 0
	check "writeFile (createDirs) returns bytesWritten: 7 bytes of UTF-8" has w1 7
	check "the file on the host holds them" has w1.host true
	check "writeFile to a missing directory: -32001" error_is wnodir -32001
	check "naming the path" like wnodir.message '".*missing/x\.txt.*"'
	check "with data.errno ENOENT" has wnodir.errno '"ENOENT"'
	check "readFile returns the text" has r1 '"h\u00e9llo\n"'
	check "an absolute path inside the workspace works the same" has r1abs '"h\u00e9llo\n"'
	check "readFile: size 7, truncated false" \
		lines rinfo.size=7 rinfo.truncated=false
	check "readFile maxBytes 4: the first 4 bytes" has rmax.content '"0123"'
	check "size is the file's (10), truncated true" \
		lines rmax.size=10 rmax.truncated=true
	check "writeFile of bytes (base64): 1027 bytes written" has wbin 1027
	check "the host file has every byte" cmp -s "$(dirname "$WS")/blob.expected" "$WS/bin/blob"
	check "readFile base64 gives them back" has bin.roundtrip true
	check "writeFile mode 0755 makes an executable file" test "$(stat -c %a "$WS/run.sh" 2>/dev/null)" = 755
	check "which runs" has runit.stdout '"ran\n"'
	check "a new file's default mode is 0644" test "$(stat -c %a "$WS/notes/a.txt" 2>/dev/null)" = 644
	check "files written belong to the caller on the host" test "$(stat -c %u "$WS/bin/blob" 2>/dev/null)" = "$CASE_UID"
	check "stat of a file: isFile, not a directory or symlink" \
		lines stfile.isFile=true stfile.isDirectory=false stfile.isSymlink=false
	check "stat: size 7, mode 0644" lines stfile.size=7 'stfile.perm="0o644"'
	check "stat: mtimeMs matches the host's" has stfile.mtimeOk true
	check "stat of a directory: isDirectory" has stdir.isDirectory true
	check "stat of a symlink: isSymlink (lstat)" has stlink.isSymlink true
	check "readFile through a symlink within the workspace works" has rlink '"h\u00e9llo\n"'
	check "readdir: every entry, dotfiles too, sorted by name" has rd.names '[".hidden", "a", "b.txt", "c"]'
	check "readdir: a directory, files and a symlink told apart" \
		one_of rd.kinds '{".hidden": ["isFile"], "a": ["isDirectory"], "b.txt": ["isFile"], "c": ["isSymlink"]}' \
		'{".hidden": ["isFile"], "a": ["isDirectory"], "b.txt": ["isFile"], "c": ["isFile", "isSymlink"]}'
	check "exists: true for a file" has exyes true
	check "exists: false for a missing path (not an error)" has exno false
	check "exists: true for a directory" has exdir true
	check "mkdir recursive makes the parents" lines mkrec=null mkrec.host=true
	check "mkdir without recursive and a missing parent: -32001 ENOENT" \
		lines mknoparent.error=-32001 'mknoparent.errno="ENOENT"'
	check "mkdir of an existing directory: -32001 EEXIST" \
		lines mkexists.error=-32001 'mkexists.errno="EEXIST"'
	check "mkdir of one directory" has mkone.host true
	check "rm of a file removes it" lines rmfile=null rmfile.host=false
	check "rm of a non-empty directory without recursive: -32001, nothing removed" \
		lines rmnonempty.error=-32001 rmnonempty.host=true
	check "rm recursive removes the tree" lines rmrec=null rmrec.host=false
	check "rm of a missing path: -32001 ENOENT" \
		lines rmmissing.error=-32001 'rmmissing.errno="ENOENT"'
	check "rm force of a missing path: {}" has rmforce null
	check "writeFile to /etc (read-only in the jail): -32001" error_is wetc -32001
	check "and nothing appeared in the host's /etc" test ! -e "/etc/$mark"
	check "readFile /etc/shadow (the jail's view): -32001" error_is rshadow -32001
	check "its content did not leak" lacks "$OUT" 'root:'
	check "readFile of a host path the jail does not see: -32001" error_is rhostonly -32001
	check "its content did not leak" lacks "$OUT" host-only-content
	check "writeFile over a file returns the new length" has overwrite 5
	check "and replaces its content" test "$(cat "$WS/notes/a.txt")" = short
}

case_symlink_escape() {
	ln -s /etc/passwd "$WS/passwd-link"
	ln -s / "$WS/root-link"
	ln -s /tmp "$WS/tmp-link"
	ln -s /tmp/jr-planted-file "$WS/file-link"
	mkdir "$WS/sub"
	echo inside >"$WS/sub/file"
	ln -s sub/file "$WS/ok-link"
	ln -s sub "$WS/sub-link"
	chown -h "$CASE_UID:$CASE_UID" "$WS"/*
	chown -R "$CASE_UID:$CASE_UID" "$WS/sub"
	py <<'EOF'
from jrtest import *
c = client()
step("passwd", c.read_file, "passwd-link")
step("passwdabs", c.read_file, WS + "/passwd-link")
step("rootlink", c.read_file, "root-link/etc/passwd")
step("plantdir", c.write_file, "tmp-link/jr-planted-dir", "x")
step("plantfile", c.write_file, "file-link", "x")
step("mkdirout", c.mkdir, "tmp-link/jr-planted-mkdir")
step("planted", c.exec, "ls /tmp/jr-planted-dir /tmp/jr-planted-file /tmp/jr-planted-mkdir 2>/dev/null; true")
r = step("globout", c.glob, "root-link/etc/pass*")
if r is None:
    out("globout", None)
step("okl", c.read_file, "ok-link")
step("subl", c.read_file, "sub-link/file")
step("close", c.close)
EOF
	check "the driver ran to its end" has close 0
	check "readFile of a symlink to /etc/passwd: an error" failed passwd
	check "naming the path" like passwd.message '".*passwd-link.*"'
	check "the same by its absolute path" like passwdabs.message '".*passwd-link.*"'
	check "readFile through a symlink to / : an error naming the path" like rootlink.message '".*root-link/etc/passwd.*"'
	check "no line of /etc/passwd came back" lacks "$OUT" 'root:x:0:0'
	check "writeFile through a directory symlink out of the workspace: an error" failed plantdir
	check "writeFile through a dangling symlink out of the workspace: an error" failed plantfile
	check "mkdir through a symlink out of the workspace: an error" failed mkdirout
	check "nothing was planted in the jail's /tmp" has planted.stdout '""'
	check "glob does not follow a symlink out of the workspace" one_of globout '[]' -32001 -32002
	check "a symlink within the workspace is followed (control)" has okl '"inside\n"'
	check "and a directory symlink within it" has subl '"inside\n"'
}

# No line the driver printed for policy POL holds the fixture key's text.
secret_absent() { ! grep "^$1\\." "$OUT" | grep -q jailrun-test-secret; }

case_secret() {
	ln -s "$FIXHOME/.ssh/id_rsa" "$WS/key-link"
	chown -h "$CASE_UID:$CASE_UID" "$WS/key-link"
	py <<'EOF'
from jrtest import *
key = HOME + "/.ssh/id_rsa"
def attempt(k, fn, *args, **kwargs):
    """step; an error also prints KEY="error"."""
    r = step(k, fn, *args, **kwargs)
    if r is None:
        out(k, "error")
    return r
for pol in ("default", "strict"):
    with client(policy=None if pol == "default" else pol) as c:
        attempt(pol + ".read", c.read_file, key)
        attempt(pol + ".readb", c.read_file, key, binary=True)
        step(pol + ".link", c.read_file, "key-link")
        if step(pol + ".grep", c.grep, "jailrun-test-secret", path=HOME) is None:
            out(pol + ".grep.matches", "error")
        step(pol + ".cat", c.exec, "cat ~/.ssh/id_rsa")
        step(pol + ".write", c.write_file, key, "overwritten")
    out(pol + ".returncode", c.returncode)
EOF
	check "the driver ran to its end" test "$RC" -eq 0
	for pol in default strict; do
		check "$pol: readFile ~/.ssh/id_rsa fails or is empty" \
			one_of "$pol.read" '""' '"error"'
		check "$pol: base64 too" \
			one_of "$pol.readb" '""' '"error"'
		check "$pol: a symlink to it from the workspace is refused" failed "$pol.link"
		check "$pol: grep finds nothing in it" \
			one_of "$pol.grep.matches" '[]' '"error"'
		check "$pol: writeFile over it fails" failed "$pol.write"
		check "$pol: the server ran (exit 0)" has "$pol.returncode" 0
		check "$pol: the secret appears nowhere" secret_absent "$pol"
	done
	check "the key on the host is untouched" contains "$FIXHOME/.ssh/id_rsa" jailrun-test-secret
}

case_glob_grep() {
	mkdir -p "$WS/src/deep"
	printf 'import os\nx = "needle"\n' >"$WS/src/a.py"
	printf 'y = 1\n' >"$WS/src/b.py"
	printf 'def f():\n    return "haystack"\n' >"$WS/src/deep/c.py"
	printf 'NEEDLE upper\nneedle lower\n' >"$WS/src/deep/d.txt"
	printf 'top = 1\n' >"$WS/top.py"
	printf '# readme\n\na needle here\n' >"$WS/README.md"
	chown -R "$CASE_UID:$CASE_UID" "$WS/src" "$WS/top.py" "$WS/README.md"
	py <<'EOF'
from jrtest import *
c = client()
def norm(r):
    return sorted((m["path"][2:] if m["path"].startswith("./") else m["path"], m["line"], m["text"])
                  for m in r["matches"])
step("g1", c.glob, "*.py")
step("g2", c.glob, "src/**/*.py")
step("g3", c.glob, "*.py", cwd="src")
step("g4", c.glob, "**/*.txt")
step("g5", c.glob, "*.nothing")
r = step("m1", c.grep, "needle")
if r: out("m1.norm", norm(r))
r = step("m2", c.grep, "needle", ignore_case=True)
if r: out("m2.norm", norm(r))
r = step("m3", c.grep, "needle", include="*.py")
if r: out("m3.norm", norm(r))
r = step("m4", c.grep, "needle", max_results=1)
if r: out("m4.count", len(r["matches"]))
r = step("m5", c.grep, "ne+dle|hay(stack)?", path="src")
if r: out("m5.norm", norm(r))
r = step("m6", c.grep, "needle", path="src/deep/d.txt")
if r: out("m6.norm", norm(r))
step("m7", c.grep, "(")
step("close", c.close)
EOF
	check "the driver ran to its end" has close 0
	check "glob *.py: the top level only" has g1 '["top.py"]'
	check "glob src/**/*.py: every depth, sorted" has g2 '["src/a.py", "src/b.py", "src/deep/c.py"]'
	check "glob with cwd: paths relative to it" has g3 '["a.py", "b.py"]'
	check "glob **/*.txt" has g4 '["src/deep/d.txt"]'
	check "glob matching nothing: []" has g5 '[]'
	check "grep: every matching line with path and 1-based line" \
		has m1.norm '[["README.md", 3, "a needle here"], ["src/a.py", 2, "x = \"needle\""], ["src/deep/d.txt", 2, "needle lower"]]'
	check "grep: truncated false" has m1.truncated false
	check "grep ignoreCase" \
		has m2.norm '[["README.md", 3, "a needle here"], ["src/a.py", 2, "x = \"needle\""], ["src/deep/d.txt", 1, "NEEDLE upper"], ["src/deep/d.txt", 2, "needle lower"]]'
	check "grep include *.py" has m3.norm '[["src/a.py", 2, "x = \"needle\""]]'
	check "grep maxResults 1: one match" has m4.count 1
	check "grep maxResults 1: truncated true" has m4.truncated true
	check "grep: an extended regex, under path" \
		has m5.norm '[["src/a.py", 2, "x = \"needle\""], ["src/deep/c.py", 2, "    return \"haystack\""], ["src/deep/d.txt", 2, "needle lower"]]'
	check "grep of a single file" like m6.norm '\[\["(\./)?(src/deep/)?d\.txt", 2, "needle lower"\]\]'
	check "grep of an invalid regex: an error" like m7.error '-32[0-9]{3}'
}

unsupported() { has "$1.error" -32000 && like "$1.message" '".*not supported in this version.*"'; }
invalid_params_naming() { has "$1.error" -32602 && like "$1.message" "\".*$2.*\""; }
policy_is() { has info.policy.name "\"$1\"" && like info.policy.sha256 '"[0-9a-f]{64}"'; }

case_protocol() {
	py <<'EOF'
from jrtest import *
import threading
c = client()
step("nomethod", c.call, "noSuchMethod", {})
step("snapshot", c.call, "snapshot", {})
step("restore", c.call, "restore", {})
step("missing", c.read_file, "notes/x.txt")
step("nopath", c.call, "readFile", {})
step("badtype", c.call, "readFile", {"path": 42})
slow = c.exec_async("sleep 2; echo slow")
t = time.monotonic()
step("fast", c.exec, "echo fast")
out("fast.first", time.monotonic() - t < 1.5)
step("slow", c.wait, slow)
bad = []
def worker(n):
    for i in range(5):
        word = "w%d-%d" % (n, i)
        try:
            if c.exec(argv=["echo", word])["stdout"] != word + "\n":
                bad.append(word)
        except Exception as e:
            bad.append("%s: %s" % (word, e))
ts = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
out("threads.bad", bad)
c.notify("info", {})
c.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method"\n')
c.send_raw(b'{"jsonrpc": "2.0", "id": "no-method", "params": {}}\n')
step("aftergarbage", c.exec, "echo ok")
time.sleep(0.3)
out("unmatched.codes", sorted(m.get("error", {}).get("code", 0) for m in c.unmatched
                              if isinstance(m, dict) and isinstance(m.get("error"), dict)))
out("unmatched.ids", sorted(str(m.get("id")) for m in c.unmatched if isinstance(m, dict)))
out("unmatched.count", len(c.unmatched))
step("info", c.info)
step("close", c.close)
import subprocess
p = subprocess.Popen([BIN, "serve", "--policy", "strict"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
c = JailrunClient(reader=p.stdout, writer=p.stdin, timeout=60)
step("pipes", c.exec, "echo over given pipes")
step("pipes.close", c.close)
out("pipes.rc", p.wait(10))
EOF
	check "the driver ran to its end" has close 0
	check "an unknown method: -32601" error_is nomethod -32601
	check "snapshot: -32000 not supported" \
		unsupported snapshot
	check "restore: -32000 not supported" \
		unsupported restore
	check "a missing file: -32001" error_is missing -32001
	check "message as in the spec" has missing.message '"readFile notes/x.txt: No such file or directory"'
	check "data.errno ENOENT" has missing.errno '"ENOENT"'
	check "readFile without path: -32602 naming it" \
		invalid_params_naming nopath path
	check "readFile with a number as path: -32602" error_is badtype -32602
	check "responses out of order: a fast exec answered while a slow one runs" has fast.first true
	check "and the slow one answered later" has slow.stdout '"slow\n"'
	check "40 execs from 8 threads, each answered to its caller" has threads.bad '[]'
	check "garbage: a parse error (-32700) and an invalid request (-32600)" has unmatched.codes '[-32700, -32600]'
	check "with ids null and as sent" has unmatched.ids '["None", "no-method"]'
	check "a notification got no response" has unmatched.count 2
	check "the server keeps serving after them" has aftergarbage.stdout '"ok\n"'
	check "info: version" has info.version "\"$VERSION\""
	check "info: the policy's name and sha256" \
		policy_is strict
	check "info: the workspace" has info.workspace "\"$WS\""
	check "a client over given pipes (no subprocess of its own)" has pipes.stdout '"over given pipes\n"'
	check "close over given pipes: shutdown, the server exits 0" lines pipes.close=null pipes.rc=0
	check "info: startedAt is RFC 3339" like info.startedAt '"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"'
}

case_guard() {
	echo original >"$WS/existing.txt"
	chown "$CASE_UID:$CASE_UID" "$WS/existing.txt"
	py <<'EOF'
from jrtest import *
c = client(args=("-D", "guard read-before-write"))
step("unread", c.write_file, "existing.txt", "new")
out("unread.host", open(os.path.join(WS, "existing.txt")).read())
step("read", c.read_file, "existing.txt")
step("afterread", c.write_file, "existing.txt", "new")
step("fresh", c.write_file, "fresh.txt", "x")
step("close", c.close)
EOF
	check "the driver ran to its end" has close 0
	check "guard read-before-write: writeFile of an unread file: -32002" error_is unread -32002
	check "with the spec's message" \
		has unread.message '"writeFile existing.txt: refused: the file was not read first (guard read-before-write)"'
	check "the file was not touched" has unread.host '"original\n"'
	check "after readFile the write goes through" has afterread 3
	check "a new file needs no read" has fresh 1
	check "the host file has the new content" test "$(cat "$WS/existing.txt")" = new
}

case_session() {
	name=pyclient-$JR_MODE-$$
	PY_ENV="SESSION=$name"
	py <<'EOF'
from jrtest import *
name = os.environ["SESSION"]
with client(session=name) as c:
    step("s1.info", c.info)
    step("s1.write", c.exec, "echo kept > /tmp/jr-session-file")
out("s1.returncode", c.returncode)
with client(session=name) as c:
    step("s2.read", c.exec, "cat /tmp/jr-session-file")
    step("s2.info", c.info)
c = client(session=name, policy="default")
step("other", c.info)
step("other.exec", c.exec, "echo hi")
c.close()
with client() as c:
    step("private", c.exec, "cat /tmp/jr-session-file")
EOF
	check "the driver ran to its end" test "$RC" -eq 0
	check "info.session names the session" has s1.info.session "\"$name\""
	check "shutdown ends serve (exit 0)" has s1.returncode 0
	check "a second serve --session of that name finds /tmp as the first left it" has s2.read.stdout '"kept\n"'
	check "and the same session" has s2.info.session "\"$name\""
	check "serve --session with another policy is refused" has other.errtype '"JailrunConnectionError"'
	check "saying which policy runs" contains "$ERR" "session $name runs policy"
	check "a private session has its own /tmp" has private.exitCode 1
	(cd "$WS" && as_user env HOME="$FIXHOME" "$JR_BIN" --session "$name" --stop) >/dev/null 2>&1
	stop_rc=$?
	check "the session outlived the servers and stops with --stop" test "$stop_rc" -eq 0
}

run_cases case_exec case_timeout case_cancel case_server_killed case_files case_symlink_escape \
	case_secret case_glob_grep case_protocol case_guard case_session
