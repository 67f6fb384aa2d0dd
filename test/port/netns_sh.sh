#!/usr/bin/env bash
# test/common/netns.sh works and cleans up: namespaces, veths and background jobs made through
# it are gone after the script that made them exits, on success and on failure.
set -u
. "${UMEM_SOURCE_DIR:-$(dirname "$0")/../..}/test/common/netns.sh"
netns_init pt

fail() { echo "FAIL: $*" >&2; exit 1; }

# A child script that builds a world, checks it, then exits with the given code.
child() {
	bash -c '
		set -u
		. "$1/test/common/netns.sh"
		netns_init pt
		netns_add A && netns_add B || exit 2
		netns_veth "$A" v0 "$B" v1 || exit 2
		ip -n "$A" addr add 10.78.0.1/24 dev v0
		ip -n "$B" addr add 10.78.0.2/24 dev v1
		netns_bg job "$B" sleep 300
		echo "$A $B $job" > "$2"
		wait_for 5 ip netns exec "$A" ping -c 1 -W 1 10.78.0.2 >/dev/null || exit 3
		exit "$3"
	' child "${UMEM_SOURCE_DIR:-$(dirname "$0")/../..}" "$1" "$2"
}

state=$(mktemp)
trap 'rm -f "$state"; netns_cleanup' EXIT
for code in 0 5; do
	child "$state" "$code"
	rc=$?
	[ "$rc" = "$code" ] || fail "child exited $rc, expected $code"
	read -r a b job < "$state"
	ip netns list | grep -q -- "$a" && fail "namespace $a left behind (exit $code)"
	ip netns list | grep -q -- "$b" && fail "namespace $b left behind (exit $code)"
	kill -0 "$job" 2>/dev/null && fail "background job $job left running (exit $code)"
done
wait_for 1 false && fail "wait_for succeeded on false"
echo "netns.sh: setup, ping, cleanup on success and failure: ok"
