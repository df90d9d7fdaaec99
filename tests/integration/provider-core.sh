#!/bin/sh
# Provider plugins (jailrun-provider(7)): the loader refuses incomplete or
# foreign plugins, --list-providers shows them, and a run through one is
# held to the policy like a local run: a clause the provider does not
# enforce stops it with exit 125.  The stub provider (tests/helpers/
# provider-stub.c) runs commands on the host, so what it ran is visible.
. "$JR_SRCDIR/tests/integration/lib.sh"

PROV=$JR_TOP/providers
mkdir -p "$PROV"
cp "$JR_STUB_PROVIDERS"/*.so "$PROV/"
chmod -R a+rX "$PROV"

jrp() {
	JR_ENV="JAILRUN_PROVIDER_PATH=$PROV ${JR_EXTRA_ENV:-}" jr "$@"
}

case_list_and_refusals() {
	jrp --list-providers
	check "--list-providers shows the built-in local provider" grep -q '^local  *abi 1' "$OUT"
	check "and the stub, with its path" grep -q "^stub  *abi 1 .*$PROV/stub.so" "$OUT"
	check "a plugin of another ABI is refused, saying so" contains "$OUT" "badabi.so: ABI version 2, this jailrun speaks 1"
	check "one without a required method is refused, naming it" contains "$OUT" "noexec.so: the required method exec is missing"
	check "one without the entry point is refused" contains "$OUT" "noentry.so: no jailrun_provider_v1 entry point"
	check_rc 1 "--list-providers exits 1 when some plugin was refused"
	for bad in badabi noexec noentry; do
		jrp --provider $bad -- touch "$WS/ran-$bad"
		check "--provider $bad: exit 125" test "$RC" -eq 125
		check "and nothing ran" test ! -e "$WS/ran-$bad"
	done
	jrp --provider missing -- true
	check "an unknown provider: 125, naming where it looked" \
		sh -c "[ $RC -eq 125 ] && grep -q 'no provider .missing.' '$ERR'"
	jrp --provider ../stub -- true
	check "a provider name with a path in it is refused" test "$RC" -eq 125
}

case_run_through_stub() {
	rec=$WS/record.json
	jrp --policy strict --provider stub --provider-opt "record=$rec" -- sh -c 'echo out; echo err >&2; exit 3'
	check_rc 3 "the command's exit status comes back through the provider"
	check "its stdout" contains "$OUT" out
	check "its stderr" contains "$ERR" err
	check "open() got the policy as JSON" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
p = json.loads(lines[0])
assert p["version"] == 1 and p["network"]["mode"] == "none", p["network"]
assert p["policy"]["name"] == "strict" and len(p["policy"]["sha256"]) == 64
assert any(c["directive"] == "net" and c["kind"] == "semantic" for c in p["clauses"])
assert any(c["directive"] == "landlock" and c["kind"] == "mechanism" for c in p["clauses"]) or True
rules = p["seccomp"]["rules"]
assert "mount" in sum((r["syscalls"] for r in rules), [])
# Rules as the filter compiler adds them: group conditions kept
# (clone only with namespace flags, clone3 ENOSYS, ioctl on 32 bits).
clone = [r for r in rules if r["syscalls"] == ["clone"]]
assert clone and all(r["conditions"] and r["conditions"][0]["op"] == "&=" for r in clone), clone
assert any(r["syscalls"] == ["clone3"] and r["action"] == "errno" and r["errno"] == 38 for r in rules)
ioctl = [r for r in rules if r["syscalls"] == ["ioctl"]]
assert ioctl and all(c["mask"] == "4294967295" for r in ioctl for c in r["conditions"]), ioctl
assert p["workspace"]["path"] == sys.argv[2]
' "$rec" "$WS"
	JR_EXTRA_ENV="GITHUB_TOKEN=tok-prov SAFE_VAR=visible" jrp --policy strict --provider stub -- env
	JR_EXTRA_ENV=
	check "the command gets the policy's environment: secrets scrubbed" sh -c "! grep -q '^GITHUB_TOKEN=' '$OUT'"
	check "(the rest passes)" grep -q '^SAFE_VAR=visible' "$OUT"
}

case_unenforced_clause_fails_closed() {
	jrp --policy strict --provider stub --provider-opt refuse=net -- touch "$WS/ran"
	check_rc 125 "a clause the provider does not enforce: exit 125"
	check "the message names the clause and the provider's reason" \
		sh -c "grep -q \"'net none' is not enforced by provider stub: the stub cannot do net\" '$ERR'"
	check "and nothing ran" test ! -e "$WS/ran"
	jrp --policy strict -D 'landlock require 1' --provider stub --provider-opt refuse=landlock -- touch "$WS/ran"
	check "a mechanism clause (landlock require) is not the provider's: it runs" test "$RC" -eq 0 -a -e "$WS/ran"
	rm -f "$WS/ran"
	jrp --policy strict -D 'landlock scope signal' --provider stub --provider-opt refuse=landlock -- touch "$WS/ran"
	check "but landlock scope says what is kept out: unenforced, it stops the run (125)" \
		sh -c "[ $RC -eq 125 ] && [ ! -e '$WS/ran' ]"
	jrp --policy strict -D 'net host' --provider stub --provider-opt refuse=net -- true
	check "an overridden setting (strict's net none under net host) is not asked about: the refusal names net host" \
		sh -c "[ $RC -eq 125 ] && grep -q \"'net host' is not enforced\" '$ERR'"
	jrp --policy strict --provider stub --provider-opt refuse=net -v -- true
	check "-v prints the provider's answer for each clause" contains "$ERR" "provider stub: net none -> NOT ENFORCED: the stub cannot do net"
	check "(and not the local jail's plan)" lacks "$ERR" "mount namespace"
	jrp --policy strict --provider stub --report - -- true
	check "--report with --provider is refused (it would describe the local jail)" test "$RC" -eq 125
}

case_config_and_redaction() {
	rec=$WS/record.json
	pol=$JR_TOP/$JR_MODE/prov.pol
	printf 'include strict\nprovider stub region=eu api_token=s3cr3t-policy\nprovider other x=1\nprovider stub auth_token="Bearer s3cr3t-quoted" z=1\n' >"$pol"
	chmod 644 "$pol"
	jrp --policy "$pol" --provider stub --provider-opt "record=$rec" -- true
	check "provider NAME KEY=VALUE lines reach that provider, then --provider-opt" \
		sh -c "grep -qx 'config region=eu' '$rec' && grep -qx 'config api_token=s3cr3t-policy' '$rec' && grep -qx 'config record=$rec' '$rec'"
	check "not another provider's" sh -c "! grep -q 'config x=1' '$rec'"
	check "the policy JSON holds no credential (its provider clause is redacted)" \
		sh -c "! head -n 1 '$rec' | grep -q s3cr3t-policy"
	jrp --policy strict --provider stub --provider-opt fail=open --provider-opt 'api_token=***' -- true
	check "a credential that is itself *** does not hang the redaction" test "$RC" -eq 125
	jrp --policy "$pol" --explain
	check "--explain does not print a provider's secret" lacks "$OUT" s3cr3t-policy
	check "nor a quoted one with a space in it" lacks "$OUT" s3cr3t-quoted
	check "(it shows the line, redacted)" contains "$OUT" "api_token=***"
	jrp --policy strict --provider stub --provider-opt fail=open --provider-opt api_token=s3cr3t-flag -- true
	check_rc 125 "a provider that fails open: 125"
	check "its message is shown" contains "$ERR" "provider stub: open: cannot log in with"
	check "with the credential redacted" lacks "$ERR" s3cr3t-flag
	jrp --provider stub --provider-opt novalue -- true
	check "--provider-opt without KEY=VALUE is refused" test "$RC" -eq 125
}

run_cases case_list_and_refusals case_run_through_stub case_unenforced_clause_fails_closed \
	case_config_and_redaction
