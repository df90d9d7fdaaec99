#!/bin/sh
# `jailrun mcp` driven by the official MCP TypeScript SDK client
# (@modelcontextprotocol/sdk: Client + StdioClientTransport): mcp-client.mjs
# runs a whole session against `jailrun mcp --policy strict` and prints one
# JSON summary line, checked here field by field.  The SDK is installed by
# mcp-sdk-install.sh into $JR_SDK_DIR (default /var/cache/jailrun-test/mcp-sdk),
# reused when present; that needs node 18+, npm and the npm registry once.
. "$JR_SRCDIR/tests/integration/lib.sh"

SDK_DIR=$(sh "$JR_SRCDIR/tests/integration/mcp-sdk-install.sh") || {
	echo "Bail out! the MCP SDK could not be installed (tests/integration/mcp-sdk-install.sh)"
	exit 1
}
MCPDIR=$JR_TOP/mcp
mkdir -p "$MCPDIR"
cp "$JR_SRCDIR/tests/integration/mcp-client.mjs" "$MCPDIR/mcp-client.mjs"
# ESM imports are resolved from the script's directory up.
ln -s "$SDK_DIR/node_modules" "$MCPDIR/node_modules"
cat >"$MCPDIR/summary.py" <<'EOF'
"""summary.py FILE EXPR: whether the Python expression EXPR holds of s, the
JSON object on FILE's last line; on failure prints the fields EXPR uses."""
import json
import re
import sys

path, expr = sys.argv[1], sys.argv[2]
try:
    with open(path) as f:
        last = [l for l in f.read().splitlines() if l.strip()][-1]
    s = json.loads(last)
except (OSError, IndexError, ValueError) as e:
    print("#   no JSON summary in %s: %s" % (path, e))
    sys.exit(1)


def lines(r):
    """The lines of a tool result's text."""
    return r.get("text", "").splitlines() if isinstance(r, dict) else []


def strip_dot(xs):
    return [x[2:] if x.startswith("./") else x for x in xs]


try:
    ok = eval(expr, {"s": s, "lines": lines, "strip_dot": strip_dot, "re": re})
except Exception as e:
    ok = False
    print("#   %s: %s" % (type(e).__name__, e))
if not ok:
    for key in sorted(set(re.findall(r's\["([^"]+)"\]', expr))):
        print("#   s[%r] = %s" % (key, json.dumps(s.get(key))[:400]))
    if s.get("errors"):
        print("#   errors: %s" % json.dumps(s["errors"])[:600])
sys.exit(0 if ok else 1)
EOF
chmod -R a+rX "$MCPDIR"
VERSION=$("$JR_BIN" --version | sed -n 's/^jailrun //p')

# One TAP point: the Python expression EXPR holds of the summary s.
scheck() {
	check "$1" python3 "$MCPDIR/summary.py" "$OUT" "$2"
}

case_sdk_session() {
	mkdir -p "$WS/sub"
	printf '# inner\nmax value\n' >"$WS/sub/inner.md"
	ln -s /etc/passwd "$WS/passwd-link"
	chown -hR "$CASE_UID:$CASE_UID" "$WS/sub" "$WS/passwd-link"
	(cd "$WS" && as_user env HOME="$FIXHOME" timeout -k 5 180 node "$MCPDIR/mcp-client.mjs" "$JR_BIN" "$WS") \
		</dev/null >"$OUT" 2>"$ERR"
	RC=$?
	check_rc 0 "the SDK client ran its session to the end"
	scheck "it connected (initialize, notifications/initialized)" 's["connected"] is True'
	scheck "no step threw" 's["errors"] == []'
	scheck "the server negotiated 2025-06-18 (the SDK asks for a newer one)" 's["protocolVersion"] == "2025-06-18"'
	scheck "serverInfo: name jailrun, jailrun's version" \
		"s[\"serverInfo\"] == {\"name\": \"jailrun\", \"version\": \"$VERSION\"} or (s[\"serverInfo\"][\"name\"] == \"jailrun\" and s[\"serverInfo\"][\"version\"] == \"$VERSION\")"
	scheck "capabilities include tools" 's["hasToolsCapability"] is True'
	scheck "ping answers" 's["ping"] is True'
	scheck "tools/list: the seven tools" \
		's["tools"] == ["bash", "edit_file", "glob", "grep", "list_directory", "read_file", "write_file"]'
	scheck "each with an object inputSchema naming its parameters as required" 's["schemaProblems"] == []'
	scheck "and a description" 's["descriptions"] is True'
	scheck "bash echo hello: text hello, not isError" \
		's["bashEcho"]["isError"] is False and s["bashEcho"]["text"].strip() == "hello"'
	scheck "bash exit 3: a normal result (not isError)" 's["bashExit"]["isError"] is False'
	scheck "its text: stdout, then stderr, then exit code 3" \
		're.fullmatch(r"out\n+err\n+\[?exit code 3\]?\n?", s["bashExit"]["text"]) is not None'
	scheck "write_file: \"wrote 11 bytes to notes.txt\"" \
		's["write"]["isError"] is False and re.search(r"wrote 11 bytes to \S*notes\.txt", s["write"]["text"]) is not None'
	check "the file reached the host" test "$(cat "$WS/notes.txt" 2>/dev/null)" = "$(printf 'alpha\ngamma')"
	check "owned by the caller" test "$(stat -c %u "$WS/notes.txt" 2>/dev/null)" = "$CASE_UID"
	scheck "read_file: the content" 's["read"]["isError"] is False and s["read"]["text"] == "alpha\nbeta\n"'
	scheck "edit_file of one occurrence succeeds" 's["edit"]["isError"] is False'
	scheck "and read_file sees the edit" 's["readAfterEdit"]["text"] == "alpha\ngamma\n"'
	scheck "edit_file with two occurrences: isError" 's["editAmbiguous"]["isError"] is True'
	scheck "saying so (a message)" 'len(s["editAmbiguous"]["text"]) > 0'
	scheck "edit_file with none: isError" 's["editMissing"]["isError"] is True'
	scheck "neither changed the file" 's["readDup"]["text"] == "x\nx\n"'
	check "not on the host either" test "$(cat "$WS/dup.txt" 2>/dev/null)" = "$(printf 'x\nx')"
	scheck "grep: path:line:text" 'strip_dot(lines(s["grep"])) == ["notes.txt:2:gamma"]'
	scheck "grep include *.md" 'strip_dot(lines(s["grepInclude"])) == ["sub/inner.md:2:max value"]'
	scheck "list_directory: files, and directories with a trailing /" \
		'"notes.txt" in lines(s["listDirectory"]) and "sub/" in lines(s["listDirectory"]) and "dup.txt" in lines(s["listDirectory"]) and "sub" not in lines(s["listDirectory"])'
	scheck "list_directory of sub" 'lines(s["listSub"]) == ["inner.md"]'
	scheck "glob **/*.md" 'strip_dot(lines(s["glob"])) == ["sub/inner.md"]'
	scheck "read_file of the masked ~/.ssh/id_rsa: isError or empty" \
		's["readSecret"]["isError"] is True or s["readSecret"]["text"] == ""'
	scheck "an error names the path" \
		's["readSecret"]["isError"] is False or ".ssh/id_rsa" in s["readSecret"]["text"]'
	scheck "bash cat ~/.ssh/id_rsa does not print it" '"jailrun-test-secret" not in s["bashSecret"]["text"]'
	scheck "the secret appears in no result" 's["secretLeaked"] is False'
	check "nor anywhere in the output" lacks "$OUT" jailrun-test-secret
	scheck "read_file of a symlink to /etc/passwd: isError naming it" \
		's["readPasswdLink"]["isError"] is True and "passwd-link" in s["readPasswdLink"]["text"]'
	scheck "no line of /etc/passwd came back" '"root:" not in s["readPasswdLink"]["text"]'
	scheck "write_file outside the workspace (/etc): isError naming the path" \
		's["writeOutside"]["isError"] is True and "/etc/jailrun-mcp-test" in s["writeOutside"]["text"]'
	check "and nothing appeared in the host's /etc" test ! -e /etc/jailrun-mcp-test
	scheck "the client closed the session" 's["closed"] is True'
}

# Protocol versions, which the SDK cannot vary: raw initialize requests.
case_protocol_versions() {
	cat >"$WS/versions.py" <<'EOF'
import json, subprocess, sys
res = {}
for asked in ("2024-11-05", "2025-03-26", "2025-06-18", "1999-01-01"):
    p = subprocess.run([sys.argv[1], "mcp", "--policy", "strict"], capture_output=True, text=True, timeout=60,
                       input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                         "params": {"protocolVersion": asked, "capabilities": {},
                                                    "clientInfo": {"name": "t", "version": "0"}}})
                       + "\n")
    try:
        res[asked] = json.loads(p.stdout.splitlines()[0])["result"]["protocolVersion"]
    except Exception as e:
        res[asked] = "no answer (exit %s): %s" % (p.returncode, e)
print(json.dumps(res))
EOF
	chmod 644 "$WS/versions.py"
	(cd "$WS" && as_user env HOME="$FIXHOME" python3 versions.py "$JR_BIN") </dev/null >"$OUT" 2>"$ERR"
	RC=$?
	check_rc 0 "four raw initialize requests, each to a fresh jailrun mcp"
	scheck "initialize answers a known version with that version" \
		's["2024-11-05"] == "2024-11-05" and s["2025-03-26"] == "2025-03-26" and s["2025-06-18"] == "2025-06-18"'
	scheck "and an unknown one with its own, 2025-06-18" 's["1999-01-01"] == "2025-06-18"'
}

run_cases case_sdk_session case_protocol_versions
