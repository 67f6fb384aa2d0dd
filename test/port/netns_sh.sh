#!/usr/bin/env bash
# The shell netns helpers (tools/common/netns.sh, which tests source through test/common/netns.sh)
# work and clean up: namespaces, veths and background jobs made through
# it are gone after the script that made them exits, on success and on failure; a job that
# ignores SIGTERM is reported with where it waits, killed, and fails its script.
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
trap 'rm -rf "$state" "$state.reg"; netns_cleanup' EXIT
for code in 0 5; do
	child "$state" "$code"
	rc=$?
	[ "$rc" = "$code" ] || fail "child exited $rc, expected $code"
	read -r a b job < "$state"
	ip netns list | grep -q -- "$a" && fail "namespace $a left behind (exit $code)"
	ip netns list | grep -q -- "$b" && fail "namespace $b left behind (exit $code)"
	kill -0 "$job" 2>/dev/null && fail "background job $job left running (exit $code)"
done
# A job that outlives its SIGTERM: where it waits is printed, it is killed, and the script
# that ran it exits 1 although it passed otherwise.
out=$(NETNS_REAP_S=1 bash -c '
	. "$1/test/common/netns.sh"
	netns_init pt
	netns_add A || exit 2
	netns_bg job "$A" bash -c "trap \"\" TERM; echo up; while :; do sleep 0.1; done" >"$2.hang"
	wait_for 5 grep -q up "$2.hang" || exit 3
	echo "job $job"
	exit 0
' child "${UMEM_SOURCE_DIR:-$(dirname "$0")/../..}" "$state" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "a script whose job ignored SIGTERM exited $rc, expected 1: $out"
grep -q "still runs 1 s after SIGTERM; where its threads wait:" <<<"$out" || fail "the hung job is not named: $out"
grep -q "wchan" <<<"$out" || fail "no wait channel of the hung job: $out"
hung=$(sed -n 's/^job //p' <<<"$out")
kill -0 "$hung" 2>/dev/null && fail "the hung job $hung left running"
rm -f "$state.hang"
wait_for 1 false && fail "wait_for succeeded on false"
# The bounds stretch with the load: the run queue over the CPUs, rounded up, 1 to 8.
n=$(nproc)
for l in "0.00:1" "$n.00:1" "$n.01:2" "$((3 * n)).50:4" "$((100 * n)).00:8"; do
	echo "${l%%:*} 0.5 0.5 1/100 123" >"$state.load"
	got=$(UMEM_LOADAVG=$state.load wait_scale)
	[ "$got" = "${l#*:}" ] || fail "wait_scale at load ${l%%:*} on $n CPUs: $got, expected ${l#*:}"
done

# A run killed outright (ctest's timeout: SIGKILL, no trap) leaves its namespaces and the
# processes in them; the next netns_init removes them, and only them. The registry of
# topologies is a scratch one, so the machine's real one is not swept by this test.
export UMEM_NETNS_REG=$state.reg
dead_ns=$(bash -c '
	. "$1/test/common/netns.sh"
	netns_init pt
	netns_add A || exit 2
	ip netns add "$2-$$-mid" || exit 2
	netns_topo /bin/false "$2-$$"
	setsid ip netns exec "$A" sleep 300 >/dev/null 2>&1 &
	echo "$A $2-$$-mid $!"
	kill -KILL $$
' child "${UMEM_SOURCE_DIR:-$(dirname "$0")/../..}" "ptstale")
read -r dead_a dead_mid dead_job <<<"$dead_ns"
[ -n "$dead_job" ] || fail "the killed child reported nothing"
ip netns list | grep -q -- "$dead_a" || fail "the killed child's namespace $dead_a is not there to sweep"
netns_add mine # a live script's namespace stays
ip netns add "ns-pt-$dead_job" || fail "cannot add ns-pt-$dead_job" # not ns-TAG-PID-N: not ours
NETNS_LIST+=("ns-pt-$dead_job")
netns_sweep_child() {
	bash -c '. "$1/test/common/netns.sh"; netns_init pt' child "${UMEM_SOURCE_DIR:-$(dirname "$0")/../..}"
}
netns_sweep_child
ip netns list | grep -q -- "$dead_a" && fail "namespace $dead_a of a killed run left behind by the next run"
ip netns list | grep -q -- "$dead_mid" && fail "topology namespace $dead_mid of a killed run left behind by the next run"
# Killed, then reaped by whoever inherited it: awaited.
wait_for 5 sh -c "! kill -0 $dead_job 2>/dev/null" || fail "process $dead_job in a killed run's namespace left running"
ip netns list | grep -q -- "$mine" || fail "the sweep removed $mine, a namespace of a live script"
ip netns list | grep -q -- "ns-pt-$dead_job" || fail "the sweep removed ns-pt-$dead_job, not of its name pattern"
[ -z "$(ls -A "$UMEM_NETNS_REG")" ] || fail "the killed run's registry entry stayed: $(ls "$UMEM_NETNS_REG")"
rm -rf "$UMEM_NETNS_REG"
echo "netns.sh: setup, ping, cleanup on success and failure, a killed run swept: ok"
