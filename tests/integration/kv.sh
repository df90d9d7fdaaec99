# Checks on the KEY=VALUE lines (VALUE as JSON) that the agent-API test
# drivers (rpc-driver.py, python-client.sh's drivers) print into $OUT.
# Sourced by serve.sh and python-client.sh.

# KEY as a regex.
keyre() { printf '%s' "$1" | sed 's/[].[*^$\\]/\\&/g'; }
# On a failed check: the lines the driver printed for KEY.
_got() {
	found=$(grep -E "^$(keyre "$1")[.=]" "$OUT" | head -n 8)
	if [ -n "$found" ]; then
		printf '%s\n' "$found" | cut -c 1-300 | sed 's/^/#   got: /'
	else
		echo "#   got: no line for $1"
	fi
}
# The driver printed KEY=VALUE (VALUE as JSON, exactly).
has() { grep -qxF -- "$1=$2" "$OUT" || { _got "$1"; return 1; }; }
# It printed KEY= with a value matching the extended regex RE.
like() { grep -qE -- "^$(keyre "$1")=$2\$" "$OUT" || { _got "$1"; return 1; }; }
# Each KEY=VALUE argument was printed (has).
lines() {
	for l in "$@"; do
		has "${l%%=*}" "${l#*=}" || return 1
	done
}
# KEY=VALUE was printed for one of the VALUEs.
one_of() {
	k=$1
	shift
	for v in "$@"; do
		grep -qxF -- "$k=$v" "$OUT" && return 0
	done
	_got "$k"
	return 1
}
# KEY's value, as printed (JSON).
val() { sed -n "s/^$(keyre "$1")=//p" "$OUT" | head -n 1; }
