#!/usr/bin/env bash
# xdp-fwd without CAP_BPF, CAP_NET_ADMIN or CAP_SYS_ADMIN: a privileged step (umem-steer attach
# --pin --owner) attaches the steering program to both interfaces and pins it for user nobody;
# xdp-fwd then runs as nobody with only CAP_NET_RAW (and a memlock limit raised beforehand, or
# CAP_IPC_LOCK), binds its sockets into the pinned socket maps and forwards a UDP stream with
# the books balanced. Without CAP_NET_RAW, as another user, or without pins it fails with a
# message naming why. The bpffs is private to this test's mount namespace (unshare -m), and
# the pins are removed at the end: nothing stays attached.
# The argument is the mode (wire by default; the refusals are checked in wire only): l2 bridges
# the stream; l3 routes it (tools/topo.sh --routed), and with the pinned program the router's
# own traffic still reaches its kernel (ARP, an echo to its own address), the stream is routed
# by xdp-fwd (the kernel forwards none), and the table is as xdp-fwd found it after (no pass
# rule of its addresses left, its flags back).
if [ -z "${PINNED_UNSHARED:-}" ] && [ "$(id -u)" = 0 ]; then
	PINNED_UNSHARED=1 exec unshare -m --propagation private -- "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
STEER=$BUILD/tools/umem-steer/umem-steer
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
[ -x "$STEER" ] || fail "umem-steer not built at $STEER"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"
command -v setpriv >/dev/null || { echo "skip: no setpriv (util-linux)"; exit 77; }
USER_ID=$(id -u nobody 2>/dev/null) && GROUP_ID=$(getent group nogroup | cut -d: -f3) ||
	{ echo "skip: no user nobody / group nogroup"; exit 77; }

FRAMES=3000
BPF=$WORK/bpf
# The pins' folder must be reachable by nobody: its parents searchable, the bpffs 0755.
chmod 0711 "$WORK"
mkdir "$BPF" && mount -t bpf -o mode=0755 bpf "$BPF" || fail "cannot mount a bpffs on $BPF"
PINS=$BPF/xdp-fwd
cleanup_pins() {
	local i
	for i in "${TOPO_IF0:-}" "${TOPO_IF1:-}"; do
		[ -n "$i" ] && [ -e "$PINS/$i" ] && "$STEER" --quiet detach "$i" --pin "$PINS" 2>/dev/null
	done
	[ -e "$BPF/h1/eth0" ] && "$STEER" --quiet detach eth0 --pin "$BPF/h1" 2>/dev/null
	umount "$BPF" 2>/dev/null
}
trap 'rc=$?; set +e; cleanup_pins; netns_cleanup; exit $rc' EXIT

MODE=${1:-wire}
case $MODE in
wire | l2) topo_up --hosts 2 ;;
l3) topo_up --hosts 2 --routed ;;
*) fail "unknown mode '$MODE'" ;;
esac
steer() { ip netns exec "$TOPO_MID" "$STEER" "$@"; }

log "privileged step: attach and pin for $USER_ID:$GROUP_ID"
for i in "$TOPO_IF0" "$TOPO_IF1"; do
	steer attach "$i" --pin "$PINS" --owner "$USER_ID:$GROUP_ID" || fail "umem-steer attach $i --pin"
	[ "$(stat -c %u:%g:%a "$PINS/$i/steer_xsks")" = "$USER_ID:$GROUP_ID:660" ] ||
		fail "pin steer_xsks is $(stat -c %u:%g:%a "$PINS/$i/steer_xsks"), not $USER_ID:$GROUP_ID:660"
done
# The writers' lock file is the user's too (it could not create one in /run/umem).
PROG_ID=$(steer show "$TOPO_IF0" | awk 'NR == 1 {print $2 + 0}')
LOCK=/run/umem/steer-prog$PROG_ID.lock
[ "$(stat -c %u "$LOCK" 2>/dev/null)" = "$USER_ID" ] || fail "lock file $LOCK: $(ls -l "$LOCK" 2>&1)"
# The program stays after umem-steer exits: the pinned link holds it.
ip -n "$TOPO_MID" -d link show "$TOPO_IF0" | grep -q "prog/xdp" || fail "no XDP program on $TOPO_IF0 after the privileged step"
# A second attach is refused while the pins hold the program.
steer attach "$TOPO_IF0" --pin "$BPF/other" 2>"$WORK/again.err" && fail "a second attach over the pinned program succeeded"
grep -q "held by pins" "$WORK/again.err" || fail "second attach: $(cat "$WORK/again.err")"


# The UMEM counts against RLIMIT_MEMLOCK without CAP_IPC_LOCK: raised by root before the drop
# where it may (CAP_SYS_RESOURCE), else CAP_IPC_LOCK stays.
CAPS=,+net_raw
ulimit -l unlimited 2>/dev/null || CAPS=,+net_raw,+ipc_lock
log "the capabilities kept: ${CAPS#,}"
# As nobody with only CAPS inherited and ambient.
AS_USER=(setpriv --reuid="$USER_ID" --regid="$GROUP_ID" --clear-groups --inh-caps="-all$CAPS"
	--ambient-caps="-all$CAPS" --bounding-set="-all$CAPS")

if [ "$MODE" = wire ]; then
	log "without CAP_NET_RAW: refused, naming it"
	ip netns exec "$TOPO_MID" setpriv --reuid="$USER_ID" --regid="$GROUP_ID" --clear-groups --inh-caps=-all \
		--bounding-set=-all "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --pinned "$PINS" -d 1 \
		>"$WORK/nocap.out" 2>"$WORK/nocap.err" && fail "xdp-fwd ran without CAP_NET_RAW"
	grep -q "cap_net_raw (AF_XDP sockets)" "$WORK/nocap.err" || fail "without CAP_NET_RAW: $(cat "$WORK/nocap.err")"
	grep -q "cap_bpf\|cap_net_admin" "$WORK/nocap.err" && fail "--pinned still asks for CAP_BPF/CAP_NET_ADMIN: $(cat "$WORK/nocap.err")"

	log "another user: the pins' mode refuses it"
	ip netns exec "$TOPO_MID" setpriv --reuid=1 --regid=1 --clear-groups --inh-caps="-all$CAPS" \
		--ambient-caps="-all$CAPS" --bounding-set="-all$CAPS" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" \
		--mode wire --pinned "$PINS" -d 1 >"$WORK/other.out" 2>"$WORK/other.err" && fail "xdp-fwd ran as uid 1 on nobody's pins"
	grep -q "cannot open the steering program pinned for $TOPO_IF0" "$WORK/other.err" ||
		fail "as uid 1: $(cat "$WORK/other.err")"

	log "no pins in the folder: refused, saying how to make them"
	ip netns exec "$TOPO_MID" "${AS_USER[@]}" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire \
		--pinned "$BPF/none" -d 1 >"$WORK/none.out" 2>"$WORK/none.err" && fail "xdp-fwd ran without pins"
	grep -q "no pinned steering program in $BPF/none/$TOPO_IF0 (a privileged step makes it" "$WORK/none.err" ||
		fail "without pins: $(cat "$WORK/none.err")"
fi

# The sink too runs as nobody: its port puts its socket into a pinned XSKMAP
# (umem_port_opts.xskmap_pin) that root steers the generator's UDP port into.
in_host 1 "$STEER" attach eth0 --pin "$BPF/h1" --owner "$USER_ID:$GROUP_ID" >/dev/null || fail "attach on host 1"
in_host 1 "$STEER" add eth0 "udp dport 9091 -> queue" >/dev/null || fail "rule on host 1"

log "nobody with ${CAPS#,} only, --mode $MODE: $FRAMES UDP frames forwarded through the pinned maps"
flags0=$(steer show "$TOPO_IF0" | grep -o "flags:.*")
# The control socket in a folder of nobody's (for the --takeover below).
mkdir "$WORK/run" && chown "$USER_ID:$GROUP_ID" "$WORK/run" || fail "cannot make $WORK/run"
SOCK=$WORK/run/ctl.sock
: >"$WORK/fwd.out"
: >"$WORK/fwd.err"
netns_bg FWD_PID "$TOPO_MID" "${AS_USER[@]}" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode "$MODE" --pinned "$PINS" --json --interval 0.5 \
	-r "prio 7 udp dport 9091 -> queue" --control "$SOCK" \
	>"$WORK/fwd.out" 2>"$WORK/fwd.err"
wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start: $(cat "$WORK/fwd.err")"
if [ "$MODE" = wire ]; then
	# --pinned refuses a handover: the new instance exits 1 saying why, the running one goes
	# on (the stream below is its), its pinned table and its sockets' registration untouched.
	log "--takeover of a --pinned instance: refused, nothing changed"
	table0=$(steer show "$TOPO_IF0"; steer show "$TOPO_IF1")
	rc=0
	ip netns exec "$TOPO_MID" "${AS_USER[@]}" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --pinned "$PINS" \
		-r "prio 7 udp dport 9091 -> queue" --control "$SOCK" --takeover >"$WORK/take.out" 2>"$WORK/take.err" || rc=$?
	[ $rc = 1 ] || fail "--takeover of a --pinned instance exited $rc, expected 1: $(cat "$WORK/take.err")"
	grep -q "refused: handover: not with --pinned .*; it runs on, nothing changed" "$WORK/take.err" ||
		fail "--takeover of a --pinned instance: $(cat "$WORK/take.err")"
	kill -0 "$FWD_PID" || fail "the --pinned instance stopped after a refused handover"
	"$CTL" -s "$SOCK" version >/dev/null || fail "the --pinned instance's control socket is gone after a refused handover"
	[ "$(steer show "$TOPO_IF0"; steer show "$TOPO_IF1")" = "$table0" ] ||
		fail "a refused handover changed the pinned tables: before
$table0
after
$(steer show "$TOPO_IF0"; steer show "$TOPO_IF1")"
fi
# setsid, ip netns exec and setpriv each exec the next: the job is xdp-fwd itself.
[ "$(awk '/^Uid:/ {print $2 ":" $3}' "/proc/$FWD_PID/status")" = "$USER_ID:$USER_ID" ] ||
	fail "xdp-fwd (pid $FWD_PID) runs as $(awk '/^Uid:/' "/proc/$FWD_PID/status"), not nobody"
grep -q "^CapEff:.*0000000000000000" "/proc/$FWD_PID/status" || fail "xdp-fwd kept effective capabilities: $(grep ^Cap "/proc/$FWD_PID/status")"
steer show "$TOPO_IF0" | grep -q "default -> queue" || fail "xdp-fwd did not set the pinned table's default: $(steer show "$TOPO_IF0")"
steer show "$TOPO_IF0" | grep -q "prio 7 udp dport 9091" || fail "xdp-fwd's -r rule is not in the pinned table: $(steer show "$TOPO_IF0")"
GEN_TO=()
if [ "$MODE" = l3 ]; then
	# The router's own traffic is its kernel's: ARP (host 0 forgets the gateway's MAC and asks
	# again) and an echo to the gateway's address (a pass rule xdp-fwd put in the pinned table).
	steer show "$TOPO_IF0" | grep -q "flags:.*host-control.*router" || fail "the pinned table lacks l3's flags: $(steer show "$TOPO_IF0")"
	steer show "$TOPO_IF0" | grep -q "dst $TOPO_GW0 .*-> pass" || fail "no pass rule of $TOPO_GW0 in the pinned table: $(steer show "$TOPO_IF0")"
	in_host 0 ip neigh del "$TOPO_GW0" dev eth0 || fail "cannot forget the gateway's MAC"
	in_host 0 ping -c 3 -i 0.05 -W 1 "$TOPO_GW0" >"$WORK/ping_gw" || fail "the router's own address not answered: $(cat "$WORK/ping_gw")"
	in_host 0 ip neigh show "$TOPO_GW0" dev eth0 | grep -qi "$TOPO_GWMAC0" || fail "ARP for the gateway not answered: $(in_host 0 ip neigh show dev eth0)"
	grep -q "ttl=64" "$WORK/ping_gw" || fail "the echo of $TOPO_GW0 not from the router itself: $(cat "$WORK/ping_gw")"
	# Through it: routed by xdp-fwd (TTL 63, the router's kernel forwards none).
	fwd0=$(ip netns exec "$TOPO_MID" awk '/^Ip:/ { n++; if (n == 2) print $7 }' /proc/net/snmp)
	in_host 0 ping -c 3 -i 0.05 -W 1 "$TOPO_IP1" >"$WORK/ping_h1" || fail "host 1 not reached through the router: $(cat "$WORK/ping_h1")"
	grep -q "ttl=63" "$WORK/ping_h1" || fail "the echo of host 1 not routed once: $(cat "$WORK/ping_h1")"
	[ "$(ip netns exec "$TOPO_MID" awk '/^Ip:/ { n++; if (n == 2) print $7 }' /proc/net/snmp)" = "$fwd0" ] ||
		fail "the router's kernel forwarded the echoes: not routed by xdp-fwd"
	log "the router's own address and ARP answered by its kernel, host 1 reached through xdp-fwd (TTL 63)"
	GEN_TO=(--dst-mac "$TOPO_GWMAC0")
fi
netns_bg SINK_PID "$TOPO_H1" "${AS_USER[@]}" "$GEN" sink -i eth0 --json --duration 60 --idle 3 \
	--xskmap "$BPF/h1/eth0/steer_xsks" >"$WORK/sink.out" 2>"$WORK/sink.err"
wait_for 10 grep -q "sink ready" "$WORK/sink.err" || fail "sink did not start: $(cat "$WORK/sink.err")"
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" ${GEN_TO[@]+"${GEN_TO[@]}"} --count "$FRAMES" --rate 5000 --size 200 \
	>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen: $(cat "$WORK/gen.err")"
sink_wait
fwd_stop INT

gen_books "$WORK/gen.out" "$WORK/sink.out" "$TOPO_IF0@0" "$TOPO_IF1@0"
[ "$BOOKS_SENT" = "$FRAMES" ] || fail "the generator sent $BOOKS_SENT of $FRAMES frames"
[ "$(port_total "$TOPO_IF0@0" rx_packets)" -ge $((FRAMES / 2)) ] || fail "xdp-fwd received $(port_total "$TOPO_IF0@0" rx_packets) frames: not through its sockets"
[ "$(in_host 1 "$STEER" show eth0 | awk '$2 == "udp" {print $(NF - 1)}')" = "$BOOKS_GOT" ] ||
	fail "the sink's pinned program steered $(in_host 1 "$STEER" show eth0 | awk '$2 == "udp" {print $(NF - 1)}') frames, the sink got $BOOKS_GOT"
# Put back as it found it: the default action passes to the kernel again.
steer show "$TOPO_IF0" | grep -q "default -> pass" || fail "the pinned table kept xdp-fwd's default: $(steer show "$TOPO_IF0")"
steer show "$TOPO_IF0" | grep -q "dport 9091" && fail "the pinned table kept xdp-fwd's rule: $(steer show "$TOPO_IF0")"
for i in "$TOPO_IF0" "$TOPO_IF1"; do
	steer show "$i" | grep -v " default -> " | grep -q " -> pass" && fail "the pinned table of $i kept xdp-fwd's pass rules: $(steer show "$i")"
done
[ "$(steer show "$TOPO_IF0" | grep -o "flags:.*")" = "$flags0" ] || fail "the pinned table's flags not put back: $(steer show "$TOPO_IF0")"

if [ "$MODE" = l3 ]; then
	# A next hop the router's kernel does not know: without CAP_NET_ADMIN the kernel refuses
	# xdp-fwd's resolution request (NTF_USE), so it is resolved by a datagram to it, then routed
	# (that request used to fail unseen: its frames were counted unresolved for ever).
	log "a next hop unknown to the router's kernel: resolved without CAP_NET_ADMIN, then routed"
	: >"$WORK/fwd.out"
	: >"$WORK/fwd.err"
	netns_bg FWD_PID "$TOPO_MID" "${AS_USER[@]}" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode l3 --pinned "$PINS" \
		--json --interval 0.5 >"$WORK/fwd.out" 2>"$WORK/fwd.err"
	wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start: $(cat "$WORK/fwd.err")"
	ip -n "$TOPO_MID" neigh del "$TOPO_IP1" dev "$TOPO_IF1" || fail "cannot forget host 1's MAC"
	wait_for 10 in_host 0 ping -c 1 -W 1 "$TOPO_IP1" >/dev/null ||
		fail "host 1 not reached after the router forgot its MAC: $(grep -o '"not_routed":{[^}]*}' "$WORK/fwd.out" | tail -1)"
	in_host 0 ping -c 3 -i 0.05 -W 1 "$TOPO_IP1" >"$WORK/ping_h1" || fail "host 1 not reached after its resolution: $(cat "$WORK/ping_h1")"
	fwd_stop INT
	grep -q "next hops are resolved by a datagram" "$WORK/fwd.err" || fail "no word of the refused resolution: $(cat "$WORK/fwd.err")"
	steer show "$TOPO_IF0" | grep -q "default -> pass" || fail "the pinned table kept xdp-fwd's default: $(steer show "$TOPO_IF0")"
fi

log "pins of another version (a map missing): refused by name"
rm "$PINS/$TOPO_IF0/steer_pstats" || fail "cannot remove a pin"
ip netns exec "$TOPO_MID" "${AS_USER[@]}" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire \
	--pinned "$PINS" -d 1 >"$WORK/old.out" 2>"$WORK/old.err" && fail "xdp-fwd ran on incomplete pins"
grep -q "lacks pin steer_pstats: pins of another libumem version" "$WORK/old.err" ||
	fail "incomplete pins: $(cat "$WORK/old.err")"

log "bad arguments to the privileged step: refused, nothing pinned"
steer attach "$TOPO_IF0" 2>"$WORK/bad.err" && fail "attach without --pin succeeded"
grep -q "attach needs --pin DIR" "$WORK/bad.err" || fail "attach without --pin: $(cat "$WORK/bad.err")"
steer attach "$TOPO_IF0" --pin "$BPF/bad" --owner nobody 2>"$WORK/bad.err" && fail "attach --owner nobody succeeded"
grep -q "give UID\[:GID\] (numbers)" "$WORK/bad.err" || fail "attach --owner nobody: $(cat "$WORK/bad.err")"
[ ! -e "$BPF/bad" ] || fail "a refused attach left $BPF/bad"

log "the privileged step removes the pins: no program left"
for i in "$TOPO_IF0" "$TOPO_IF1"; do
	steer detach "$i" --pin "$PINS" || fail "umem-steer detach $i"
done
in_host 1 "$STEER" detach eth0 --pin "$BPF/h1" || fail "umem-steer detach on host 1"
[ ! -e "$PINS" ] && [ ! -e "$BPF/h1" ] || fail "pins left: $(ls -R "$BPF")"
# The link's last reference was its pin: the kernel frees it, and so detaches the program, in a
# work item after the unpin (bpf_link_put), a moment later on a busy machine.
wait_for 5 sh -c "! ip -n '$TOPO_H1' -d link show eth0 | grep -q prog/xdp" ||
	fail "an XDP program is still attached on host 1"
[ ! -e "$LOCK" ] || fail "lock file $LOCK left"
wait_for 5 no_xdp_left || fail "an XDP program is still attached after the pins went"
log "ok"
