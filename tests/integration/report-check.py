#!/usr/bin/env python3
"""Checks one jailrun run report (--report): it must be valid against the
JSON Schema, hold the invariants the schema cannot express, and satisfy
the assertions given on the command line.

    report-check.py [--stderr] SCHEMA REPORT [ASSERTION...]
    report-check.py [--stderr] --get PATH SCHEMA REPORT

REPORT is a file holding exactly one JSON object; with --stderr it is a
captured standard error in which the report is the last JSON object that
starts at the beginning of a line (the command's own output comes before).
--get validates, then prints the value at PATH (a string as is, anything
else as JSON).

An ASSERTION is `LEFT OP LITERAL`, never evaluated as code:
  LEFT     a PATH, or len(PATH), type(PATH), exists(PATH), epochms(PATH)
  PATH     dotted keys and array indexes, with [KEY=VALUE] picking the first
           array element whose KEY is VALUE:
             enforcement.seccomp.rules   argv.0
             denials.seccomp[syscall=mount].count
  OP       == != < <= > >= =~ (regular expression search) in has !has
  LITERAL  JSON (1, "x", [1, 2], null, true); True/False/None are accepted
           too.  `in` wants an array; `has` looks for an array element or
           an object key.
type() gives null, boolean, integer, number, string, array or object;
exists() gives true or false (a missing PATH is otherwise a failure);
epochms() reads an RFC 3339 timestamp as milliseconds since the epoch.
Equality is JSON's: true is not 1, and 1 is 1.0.

Exit status 0 when everything holds; 1 otherwise, with one line per
failure on standard output (prefixed with '#', as TAP diagnostics); 2 for
a bad command line or a malformed assertion.
"""
import datetime
import json
import re
import signal
import sys

try:
    import jsonschema
except ImportError:
    print("# report-check: the python3 jsonschema module is missing (apt-get install python3-jsonschema)")
    sys.exit(2)


class Missing(Exception):
    pass


class BadAssertion(Exception):
    pass


def say(msg):
    for line in str(msg).splitlines() or [""]:
        print("#   report-check: " + line)


# ---- reading --------------------------------------------------------------

def last_object(text):
    """The last JSON object of text that starts at the beginning of a line
    and runs to the end of a line."""
    dec = json.JSONDecoder()
    found = None
    for m in re.finditer(r"(?m)^\{", text):
        try:
            obj, end = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict) and (end == len(text) or text[end] == "\n"):
            found = obj
    if found is None:
        raise ValueError("no JSON object starting at the beginning of a line")
    return found


def load_report(path, from_stderr):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if from_stderr:
        return last_object(text)
    return json.loads(text)  # the whole file: trailing bytes are an error


# ---- paths and values -------------------------------------------------------

SEGMENT = re.compile(r"""
    (?P<key>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<index>-?[0-9]+)
  | \[(?P<skey>[A-Za-z_][A-Za-z0-9_]*)=(?P<sval>[^\]]*)\]
""", re.X)


def parse_path(path):
    segs, pos = [], 0
    while pos < len(path):
        if segs and path[pos] == ".":
            pos += 1
        m = SEGMENT.match(path, pos)
        if not m or m.end() == pos:
            raise BadAssertion("bad path %r at %r" % (path, path[pos:]))
        if m.group("key") is not None:
            segs.append(("key", m.group("key")))
        elif m.group("index") is not None:
            segs.append(("index", int(m.group("index"))))
        else:
            segs.append(("select", (m.group("skey"), m.group("sval"))))
        pos = m.end()
    if not segs:
        raise BadAssertion("empty path")
    return segs


def scalar_text(v):
    if isinstance(v, str):
        return v
    return json.dumps(v)


def resolve(doc, path):
    cur, done = doc, ""
    for kind, arg in parse_path(path):
        if kind == "key":
            if isinstance(cur, list) and arg.isdigit():
                kind, arg = "index", int(arg)
            elif not isinstance(cur, dict) or arg not in cur:
                raise Missing("%s: no key %r in %s" % (path, arg, short(cur, done)))
            else:
                cur, done = cur[arg], done + "." + arg
                continue
        if kind == "index":
            if not isinstance(cur, list) or not -len(cur) <= arg < len(cur):
                raise Missing("%s: no element %d in %s" % (path, arg, short(cur, done)))
            cur, done = cur[arg], "%s.%d" % (done, arg)
        else:
            key, val = arg
            if not isinstance(cur, list):
                raise Missing("%s: %s is not an array" % (path, short(cur, done)))
            hit = [e for e in cur if isinstance(e, dict) and key in e and scalar_text(e[key]) == val]
            if not hit:
                raise Missing("%s: no element with %s=%s in %s" % (path, key, val, short(cur, done)))
            cur, done = hit[0], "%s[%s=%s]" % (done, key, val)
    return cur


def short(v, where):
    text = json.dumps(v)
    if len(text) > 200:
        text = text[:200] + "..."
    return "%s = %s" % (where.lstrip(".") or "the report", text)


def json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def same(a, b):
    """JSON equality: booleans are not numbers, 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z$")


def epoch_ms(text):
    m = RFC3339.match(text) if isinstance(text, str) else None
    if not m:
        raise Missing("%r is not an RFC 3339 UTC timestamp" % (text,))
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    frac = (m.group(7) or "0")[:3].ljust(3, "0")
    t = datetime.datetime(y, mo, d, h, mi, min(s, 59), tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1000 + int(frac)


# ---- assertions -----------------------------------------------------------

ASSERTION = re.compile(r"""^\s*
    (?:(?P<fn>len|type|exists|epochms)\(\s*(?P<fpath>[^()\s]+)\s*\)|(?P<path>[^\s=!<>~\[]+(?:\[[^\]]*\][^\s=!<>~\[]*)*))
    \s*(?P<op>==|!=|<=|>=|<|>|=~|\bin\b|!has\b|\bhas\b)\s*
    (?P<lit>.*?)\s*$""", re.X)


def literal(text):
    aliases = {"True": "true", "False": "false", "None": "null"}
    try:
        return json.loads(aliases.get(text, text))
    except ValueError:
        raise BadAssertion("not a JSON literal: %r" % text)


def check(doc, assertion):
    """None when the assertion holds, else why not."""
    m = ASSERTION.match(assertion)
    if not m:
        raise BadAssertion("cannot parse assertion %r (want PATH OP LITERAL)" % assertion)
    op, want = m.group("op"), literal(m.group("lit"))
    fn = m.group("fn")
    path = m.group("fpath") if fn else m.group("path")
    try:
        if fn == "exists":
            try:
                resolve(doc, path)
                got = True
            except Missing:
                got = False
        else:
            got = resolve(doc, path)
            if fn == "len":
                if not isinstance(got, (list, dict, str)):
                    return "%s: len() of a %s" % (assertion, json_type(got))
                got = len(got)
            elif fn == "type":
                got = json_type(got)
            elif fn == "epochms":
                got = epoch_ms(got)
    except Missing as e:
        return "%s: %s" % (assertion, e)

    if op == "==":
        ok = same(got, want)
    elif op == "!=":
        ok = not same(got, want)
    elif op in ("<", "<=", ">", ">="):
        if not (is_number(got) and is_number(want)):
            return "%s: got %s, not a number" % (assertion, json.dumps(got))
        ok = {"<": got < want, "<=": got <= want, ">": got > want, ">=": got >= want}[op]
    elif op == "=~":
        if not isinstance(want, str):
            raise BadAssertion("=~ wants a string pattern: %r" % assertion)
        if not isinstance(got, str):
            return "%s: got %s, not a string" % (assertion, json.dumps(got))
        ok = re.search(want, got) is not None
    elif op == "in":
        if not isinstance(want, list):
            raise BadAssertion("in wants an array: %r" % assertion)
        ok = any(same(got, w) for w in want)
    else:  # has, !has
        if isinstance(got, list):
            present = any(same(e, want) for e in got)
        elif isinstance(got, dict):
            present = isinstance(want, str) and want in got
        else:
            return "%s: got %s, not an array or object" % (assertion, json.dumps(got))
        ok = present if op == "has" else not present
    if ok:
        return None
    return "%s: got %s" % (assertion, json.dumps(got))


# ---- what the schema cannot say -------------------------------------------

def invariants(doc):
    """Relations between fields that the spec implies; a list of failures."""
    bad = []
    err, sig, code = doc.get("error"), doc.get("signal"), doc.get("exitCode")
    timed_out, exec_error = doc.get("timedOut"), doc.get("execError")
    name = doc.get("signalName")
    if isinstance(sig, int) and 1 <= sig <= 31:
        try:
            want = signal.Signals(sig).name
        except ValueError:
            want = None
        aliases = {"SIGIOT": "SIGABRT", "SIGPOLL": "SIGIO", "SIGCLD": "SIGCHLD"}
        if want and aliases.get(name, name) != want:
            bad.append("invariant: signal %d is %s, but signalName is %s" % (sig, want, json.dumps(name)))
    if err is None and not exec_error:
        # The command ran and ended: of an exit code, or of a signal.
        if (code is None) == (sig is None):
            bad.append("invariant: exactly one of exitCode (%s) and signal (%s) is set when the command ran"
                       % (json.dumps(code), json.dumps(sig)))
        if not timed_out:
            if code is not None and doc.get("status") != code:
                bad.append("invariant: status %s != exitCode %s" % (doc.get("status"), code))
            if sig is not None and doc.get("status") != 128 + sig:
                bad.append("invariant: status %s != 128 + signal %s" % (doc.get("status"), sig))
    if exec_error and err is not None:
        bad.append("invariant: both execError and error are set")
    denials = (doc.get("denials") or {}).get("seccomp") or []
    names = [d.get("syscall") for d in denials]
    if len(set(names)) != len(names):
        bad.append("invariant: a syscall is listed twice in denials.seccomp: %s" % json.dumps(names))
    order = sorted(denials, key=lambda d: (-d.get("count", 0), d.get("syscall", "")))
    if order != denials:
        bad.append("invariant: denials.seccomp is not sorted by count (descending) then name: %s"
                   % json.dumps(denials))
    started = doc.get("startedAt")
    if isinstance(started, str):
        try:
            epoch_ms(started)
        except (Missing, ValueError) as e:
            bad.append("invariant: startedAt %r is not a real time (%s)" % (started, e))
    return bad


# ---- main -----------------------------------------------------------------

def main(args):
    from_stderr, get = False, None
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--stderr":
            from_stderr = True
        elif opt == "--get" and args:
            get = args.pop(0)
        else:
            print("# report-check: unknown option %s" % opt)
            return 2
    if len(args) < 2 or (get is not None and len(args) != 2):
        print("# usage: report-check.py [--stderr] SCHEMA REPORT [ASSERTION...]")
        print("#        report-check.py [--stderr] --get PATH SCHEMA REPORT")
        return 2
    schema_path, report_path, assertions = args[0], args[1], args[2:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        doc = load_report(report_path, from_stderr)
    except (OSError, ValueError) as e:
        say("%s: not a report: %s" % (report_path, e))
        return 1

    failures = []
    validator = jsonschema.Draft202012Validator(schema)
    for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        failures.append("schema: at %s: %s" % (where, e.message))
    failures += invariants(doc)

    if get is not None:
        if failures:
            for f in failures:
                say(f)
            return 1
        try:
            v = resolve(doc, get)
        except (Missing, BadAssertion) as e:
            say(e)
            return 1
        print(v if isinstance(v, str) else json.dumps(v))
        return 0

    for a in assertions:
        try:
            why = check(doc, a)
        except BadAssertion as e:
            say("bad assertion: %s" % e)
            return 2
        if why:
            failures.append(why)
    for f in failures:
        say(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
