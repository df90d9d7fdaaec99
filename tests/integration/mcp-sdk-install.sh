#!/bin/sh
# Installs the official MCP TypeScript SDK (@modelcontextprotocol/sdk, 1.x)
# for tests/integration/mcp-sdk.sh, into a cache directory that is reused
# when it already holds it:
#
#   mcp-sdk-install.sh [DIR]     DIR defaults to $JR_SDK_DIR, then to
#                                /var/cache/jailrun-test/mcp-sdk
#
# The tree is made world-readable (the test runs the client as nobody too).
# Prints DIR on success; exit 1 with a message on stderr otherwise.
# Needs node (18 or later) and npm; as root, a missing npm is installed
# with apt-get.
set -u

DIR=${1:-${JR_SDK_DIR:-/var/cache/jailrun-test/mcp-sdk}}
PKG=@modelcontextprotocol/sdk
SPEC=$PKG@^1

fail() {
	echo "mcp-sdk-install: $*" >&2
	exit 1
}

installed() {
	[ -f "$DIR/node_modules/$PKG/package.json" ] &&
		[ -f "$DIR/node_modules/$PKG/dist/esm/client/stdio.js" ] &&
		[ -f "$DIR/node_modules/$PKG/dist/esm/client/index.js" ]
}

if ! installed; then
	command -v node >/dev/null 2>&1 || fail "node is missing (apt-get install nodejs)"
	major=$(node -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null)
	[ "${major:-0}" -ge 18 ] 2>/dev/null || fail "node $(node --version 2>/dev/null) is too old (the SDK needs 18 or later)"
	if ! command -v npm >/dev/null 2>&1; then
		if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y npm >&2 ||
				fail "apt-get install -y npm failed"
		fi
		command -v npm >/dev/null 2>&1 || fail "npm is missing (apt-get install npm)"
	fi
	mkdir -p "$DIR" || fail "cannot create $DIR"
	# A package.json of our own keeps npm from walking up to some
	# enclosing project, and marks the tree as ESM-friendly.
	[ -f "$DIR/package.json" ] ||
		printf '{"name":"jailrun-mcp-sdk-cache","private":true}\n' >"$DIR/package.json"
	npm install --no-audit --no-fund --loglevel=error --prefix "$DIR" "$SPEC" >&2 ||
		fail "npm install $SPEC into $DIR failed"
	installed || fail "$PKG is not in $DIR/node_modules after npm install"
fi

# World-readable, down from / to DIR: nobody must reach node_modules.
chmod -R a+rX "$DIR" || fail "chmod -R a+rX $DIR failed"
d=$DIR
while [ "$d" != / ] && [ -n "$d" ]; do
	case $(stat -c %A "$d" 2>/dev/null) in
	d????????x | d????????t) ;;
	*) chmod o+x "$d" 2>/dev/null || true ;;
	esac
	d=$(dirname "$d")
done
echo "$DIR"
