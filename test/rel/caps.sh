#!/usr/bin/env bash
# A capability missing for a privileged step is named in one line, and libbpf's and libxdp's
# own messages stay out of it unless asked (LIBUMEM_VERBOSE=1: they go through libumem's print
# callback at debug level). examples/udp-responder (steering program + ports) and
# examples/mirror (ports and their default program) run as root with every capability the
# library needs but one (setpriv, util-linux).
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
B=${UMEM_BUILD_DIR:?}
. "$SRC/test/common/netns.sh"
command -v setpriv >/dev/null || { echo "skip: no setpriv (util-linux)"; exit 77; }
netns_init cap
netns_workdir W
fail() { echo "FAIL: $*" >&2; for f in "$W"/*; do echo "--- $f" >&2; head -c 3000 "$f" >&2; done; exit 1; }
netns_add N || fail "netns"
netns_veth "$N" va "$N" vb || fail "veth"
ALL=net_raw,net_admin,bpf,perfmon,ipc_lock

# run CAPS CMD...: CMD in the namespace with only CAPS (comma list) in its bounding set; its
# stderr in $W/err, its exit code returned.
run() {
	local caps=$1
	shift
	timeout 20 ip netns exec "$N" setpriv --inh-caps=-all --bounding-set="-all,+${caps//,/,+}" -- "$@" \
		>"$W/out" 2>"$W/err"
}
# named WHAT CAP: one line on stderr, naming CAP, nothing from libbpf or libxdp (the notice
# that a veth port runs in copy mode, printed before the failing step, aside).
named() {
	sed -i '/: copy mode (/d' "$W/err"
	[ "$(wc -l <"$W/err")" = 1 ] || fail "$1: $(wc -l <"$W/err") lines on stderr, expected one"
	grep -q "$2" "$W/err" || fail "$1: the message does not name $2"
	grep -q 'libbpf\|libxdp' "$W/err" && fail "$1: libbpf's or libxdp's messages shown unasked"
	echo "$1: $(cat "$W/err")"
}
RESP=$B/examples/udp-responder
MIRROR=$B/examples/mirror
for c in bpf net_admin perfmon; do
	run "$(sed "s/\b$c\b,\?//; s/,$//" <<<"$ALL")" "$RESP" va && fail "udp-responder ran without cap_$c"
	named "udp-responder without cap_$c" "CAP_${c^^}"
done
run "${ALL/net_raw,/}" "$RESP" va && fail "udp-responder ran without cap_net_raw"
named "udp-responder without cap_net_raw" CAP_NET_RAW
run "${ALL/bpf,/}" "$MIRROR" va vb va && fail "mirror ran without cap_bpf"
named "mirror without cap_bpf" CAP_BPF
# Asked for: libbpf's lines come through libumem's callback.
run "${ALL/bpf,/}" env LIBUMEM_VERBOSE=1 "$RESP" va
grep -q '^libbpf: ' "$W/err" || fail "LIBUMEM_VERBOSE=1: libbpf's messages not routed through libumem's print"
# The whole set is enough.
netns_bg RP "$N" setpriv --inh-caps=-all --bounding-set="-all,+${ALL//,/,+}" -- "$RESP" va >"$W/ready" 2>&1
wait_for 10 grep -q ready "$W/ready" || fail "udp-responder with $ALL did not start"
echo ok
