#!/usr/bin/env python3
"""A program for the command provider (jailrun-provider(7), COMMAND
PROVIDER), for tests: it runs commands and file operations right here on
the host, in the paths jailrun names (the workspace), and enforces nothing
a jail would but the nofile, fsize and cpu limits (with setrlimit), whatever
it claims.  Never use it as a provider for real work.

It appends every request it gets to the file its `log` configuration key
names (one JSON object a line, with the names of the JAILRUN_CONFIG_*
variables it saw under "_configEnv"), and its configuration steers it:

  enforce=all          open claims every clause (the default)
  enforce=none         open claims none
  enforce=skip:DIR     open claims every clause but those of directive DIR
  answer=directives    open answers with the "directives" shorthand
  result=file          answers through JAILRUN_RESULT_PATH (and prints
                       chatter on stdout instead)
  output=stream|text|base64   exec: the command's output through
                       descriptors 3 and 4 (default), or in the result
  fail=OPERATION       that operation prints the api_token configuration
                       value on stdout and stderr, then exits 3
  error=OPERATION      that operation answers {"error": ..., "errno": "ENOENT"}
  garbage=OPERATION    that operation prints a result that is not JSON
  hang=OPERATION       that operation sleeps for a minute
  ignore_timeout=1     exec does not enforce timeoutMs itself
"""
import base64
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time

op = os.environ["JAILRUN_OPERATION"]
with open(os.environ["JAILRUN_REQUEST_PATH"]) as f:
    req = json.load(f)


def conf(key, default=None):
    return os.environ.get("JAILRUN_CONFIG_" + key.upper().replace("-", "_"), default)


if conf("log"):
    entry = dict(req)
    entry["_configEnv"] = sorted(k for k in os.environ if k.startswith("JAILRUN_CONFIG_"))
    entry["_protocol"] = os.environ.get("JAILRUN_PROTOCOL")
    with open(conf("log"), "a") as f:
        f.write(json.dumps(entry) + "\n")


def answer(obj):
    if conf("result") == "file":
        print("some chatter that is not the result")
        with open(os.environ["JAILRUN_RESULT_PATH"], "w") as f:
            json.dump(obj, f)
    else:
        json.dump(obj, sys.stdout)
    sys.exit(0)


if conf("fail") == op:
    secret = conf("api_token", "")
    print("boom on stdout, token " + secret)
    print("boom on stderr, token " + secret, file=sys.stderr)
    sys.exit(3)
if conf("error") == op:
    answer({"error": "no such thing here", "errno": "ENOENT"})
if conf("garbage") == op:
    print("{this is not json")
    sys.exit(0)
if conf("hang") == op:
    time.sleep(60)


def resolve(path):
    return path if os.path.isabs(path) else os.path.join(req["workspace"], path)


def main():
    if op == "open":
        enforce = conf("enforce", "all")
        clauses = req["policy"]["clauses"]
        skip = enforce[5:] if enforce.startswith("skip:") else None
        if conf("answer") == "directives":
            # The shorthand's keys: the directive, and its kind word for
            # directives that have one (jailrun-provider(7)).
            kinded = {"net", "home", "env", "limit", "allow", "seccomp", "caps", "landlock",
                      "isolation", "guard", "user", "workspace"}
            def key(c):
                w = c["text"].split(" ")
                return " ".join(w[:2]) if w[0] in kinded and len(w) > 1 else w[0]
            names = {key(c) for c in clauses if enforce != "none" and c["directive"] != skip}
            answer({"id": "test-instance", "directives": {n: "provider-test.py (test only)" for n in names}})
        out = []
        for c in clauses:
            if enforce == "none" or c["directive"] == skip:
                out.append({"enforced": False, "mechanism": "provider-test.py skips it"})
            else:
                out.append({"enforced": True, "mechanism": "provider-test.py (test only)"})
        answer({"id": "test-instance", "clauses": out})

    elif op == "exec":
        mode = conf("output", "stream")
        timeout = None
        if req["timeoutMs"] and not conf("ignore_timeout"):
            timeout = req["timeoutMs"] / 1000.0
        if mode == "stream":
            out, err = req["stdoutFd"], req["stderrFd"]
        else:
            out = err = subprocess.PIPE
        limits = req["limits"] or {}

        def apply_limits():
            # The few limits the policy's JSON gives that setrlimit can apply.
            import resource
            for key, res in (("nofile", resource.RLIMIT_NOFILE), ("fsizeBytes", resource.RLIMIT_FSIZE)):
                if limits.get(key) is not None:
                    resource.setrlimit(res, (limits[key], limits[key]))
            if limits.get("cpuMillis") is not None:
                secs = max(1, limits["cpuMillis"] // 1000)
                resource.setrlimit(resource.RLIMIT_CPU, (secs, secs))

        try:
            p = subprocess.Popen(req["argv"], cwd=req["cwd"], env=req["env"], stdin=0,
                                 stdout=out, stderr=err, start_new_session=True,
                                 preexec_fn=apply_limits)
        except FileNotFoundError:
            answer({"exitCode": 127, "stderr": "provider-test.py: command not found\n"})
        # jailrun interrupted (SIGTERM to the program): end the command too.
        signal.signal(signal.SIGTERM, lambda sig, frame: (os.killpg(p.pid, signal.SIGKILL),
                                                          sys.exit(143)))
        timed_out = False
        try:
            o, e = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            o, e = p.communicate()
            timed_out = True
        res = {"timedOut": timed_out}
        if p.returncode < 0:
            res["exitCode"] = None
            res["signal"] = -p.returncode
        else:
            res["exitCode"] = p.returncode
        if mode == "text":
            res["stdout"] = o.decode(errors="replace")
            res["stderr"] = e.decode(errors="replace")
        elif mode == "base64":
            res["stdoutBase64"] = base64.b64encode(o).decode()
            res["stderrBase64"] = base64.b64encode(e).decode()
        answer(res)

    elif op == "read_file":
        with open(resolve(req["path"]), "rb") as f:
            data = f.read()
        answer({"contentBase64": base64.b64encode(data).decode()})

    elif op == "write_file":
        with open(resolve(req["path"]), "wb") as f:
            f.write(base64.b64decode(req["contentBase64"]))
        os.chmod(resolve(req["path"]), req["mode"])
        answer({})

    elif op == "stat":
        try:
            st = os.lstat(resolve(req["path"]))
        except FileNotFoundError:
            answer({"error": "stat: no such file", "errno": "ENOENT"})
        import stat as S
        kind = ("directory" if S.S_ISDIR(st.st_mode) else "file" if S.S_ISREG(st.st_mode)
                else "symlink" if S.S_ISLNK(st.st_mode) else "other")
        answer({"type": kind, "size": st.st_size, "mode": st.st_mode & 0o7777,
                "mtime": int(st.st_mtime)})

    elif op == "readdir":
        answer({"names": sorted(os.listdir(resolve(req["path"])))})

    elif op == "exists":
        answer({"exists": os.path.lexists(resolve(req["path"]))})

    elif op == "mkdir":
        if req["parents"]:
            os.makedirs(resolve(req["path"]), req["mode"], exist_ok=True)
        else:
            os.mkdir(resolve(req["path"]), req["mode"])
        answer({})

    elif op == "rm":
        path = resolve(req["path"])
        if req["recursive"] and os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        else:
            os.unlink(path)
        answer({})

    elif op in ("close", "gc"):
        print("provider-test.py: " + op, file=sys.stderr)
        # Exit status 0 and no output: an empty answer.
        sys.exit(0)

    else:
        answer({"error": "unknown operation " + op, "errno": "ENOSYS"})


try:
    main()
except OSError as e:
    # A failure of the operation, named as jailrun-provider(7) asks.
    answer({"error": "%s: %s" % (op, e.strerror), "errno": errno.errorcode.get(e.errno, "EIO")})
