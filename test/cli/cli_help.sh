#!/usr/bin/env bash
# Every installed program follows the command-line conventions of docs/CLI.md: -h/--help and
# -V/--version exit 0 on stdout, the help names the program (not a path) and fits 80 columns,
# an unknown option exits 2 with a message that starts with the program's name. The list of
# programs is checked against the install() rules, so a new program cannot be forgotten here.
set -uo pipefail
build=${UMEM_BUILD_DIR:?} src=${UMEM_SOURCE_DIR:?}
read -ra emu <<<"${UMEM_EMULATOR:-}" # cross builds: qemu-user and its arguments
errors=0
fail() { echo "FAIL: $*" >&2; errors=$((errors + 1)); }
programs=(apps/xdp-fwd/xdp-fwd apps/xdp-reflect/xdp-reflect tools/xsk-gen/xsk-gen
	tools/port-bench/port-bench tools/umem-bench/umem-bench tools/umem-steer/umem-steer
	tools/steer-bench/steer-bench tools/route-bench/route-bench)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

installed=$(grep -rhoE 'install\(TARGETS [a-z0-9_-]+ RUNTIME' "$src/apps" "$src/tools" --include=CMakeLists.txt |
	awk '{ print $2 }' | sort -u)
[ -n "$installed" ] || fail "found no install(TARGETS ... RUNTIME) rule: the scan is broken"
for name in $installed; do
	printf '%s\n' "${programs[@]}" | grep -q "/$name\$" || fail "$name is installed but not checked here"
done

version=$(sed -n 's/^project(libumem VERSION \([0-9]*\.[0-9]*\).*/\1/p' "$src/CMakeLists.txt")
for p in "${programs[@]}"; do
	bin=$build/$p name=${p##*/}
	[ -x "$bin" ] || { fail "$name not built at $bin"; continue; }
	for opt in --help -h; do
		rc=0
		"${emu[@]}" "$bin" $opt >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
		[ $rc = 0 ] || fail "$name $opt exited $rc: $(head -3 "$tmp/err")"
		[ ! -s "$tmp/err" ] || fail "$name $opt wrote to stderr: $(head -3 "$tmp/err")"
		head -1 "$tmp/out" | grep -qE "^Usage: $name( |\$)" ||
			fail "$name $opt: first line is not 'Usage: $name ...': $(head -1 "$tmp/out")"
		long=$(awk 'length > 80 { printf "%d: %s\n", length, $0 }' "$tmp/out")
		[ -z "$long" ] || fail "$name $opt: lines over 80 columns:"$'\n'"$long"
		! grep -q "$build" "$tmp/out" || fail "$name $opt names its path"
		for o in --help --version; do
			grep -qE -- "^  (-[a-zA-Z], |    )$o( |\$)" "$tmp/out" || fail "$name $opt does not list $o"
		done
	done
	for opt in --version -V; do
		rc=0
		out=$("${emu[@]}" "$bin" $opt 2>&1 </dev/null) || rc=$?
		[ $rc = 0 ] || fail "$name $opt exited $rc"
		[ "$out" = "$name (libumem) $version" ] || fail "$name $opt printed '$out', expected '$name (libumem) $version'"
	done
	# The help and the man page agree: every man page the help names exists, every option of
	# the page's SYNOPSIS is one the help lists, and an example rule's "->" is quoted (unquoted,
	# the shell takes "> sock 1" as a redirection).
	"${emu[@]}" "$bin" --help >"$tmp/out" 2>/dev/null </dev/null
	for ref in $(grep -oE '\b[a-z][a-z0-9_.-]*\([1-8]\)' "$tmp/out" | sort -u); do
		page=${ref%%(*} sec=${ref#*(}; sec=${sec%)}
		compgen -G "$src/docs/man/$page.$sec" >/dev/null || compgen -G "$src/apps/*/$page.$sec" >/dev/null ||
			fail "$name --help names $ref, which no man page is"
	done
	if grep -E "^ *$name [^'\"]* -> " "$tmp/out" >"$tmp/bad"; then
		fail "$name --help has an example whose '->' the shell would redirect: $(cat "$tmp/bad")"
	fi
	manpage=$(ls "$src"/docs/man/"$name".[18] "$src"/apps/*/"$name".[18] 2>/dev/null | head -1)
	if [ -n "$manpage" ]; then
		for o in $(sed -n '/^\.SH SYNOPSIS/,/^\.SH /{s/\\//g;p}' "$manpage" |
			grep -oE '(^|[ [])-(-[a-z][a-z-]*[a-z]|[a-zA-Z])\b' | tr -d ' [' | sort -u); do
			grep -qE -- "^  (-[a-zA-Z], |    )?$o[ ,=]|^  -[a-zA-Z], $o[ ,=]|^  $o," "$tmp/out" ||
				fail "$name: ${manpage##*/} SYNOPSIS has $o, which --help does not list"
		done
		# Every long option the help lists is a tagged paragraph of the page (.TP): rendered, a
		# line at the tags' indent that starts with it, or lists it after others ("--src-ip IP,
		# --dst-ip IP"). A lost .TP leaves the option inside the previous one's text.
		MANWIDTH=200 man -l "$manpage" 2>/dev/null >"$tmp/man"
		for o in $(grep -oE -- '^  (-[a-zA-Z], |    )--[a-z][a-z0-9-]*' "$tmp/out" | grep -oE -- '--[a-z0-9-]+$'); do
			case $o in --help | --version) continue ;; esac
			grep -qE -- "^ {7}([^ ].*, )?$o([ =,[]|\$)" "$tmp/man" ||
				fail "$name: ${manpage##*/} has no paragraph for $o (a .TP lost?)"
		done
	fi
	rc=0
	"${emu[@]}" "$bin" --no-such-option >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	[ $rc = 2 ] || fail "$name --no-such-option exited $rc, expected 2"
	grep -qx "$name: unknown option '--no-such-option' (see --help)" "$tmp/err" ||
		fail "$name --no-such-option: message is not '$name: unknown option '--no-such-option' (see --help)': $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "$name --no-such-option wrote to stdout"
done
[ $errors = 0 ] || exit 1
echo "cli: ${#programs[@]} programs: --help, --version and bad options by the conventions"
