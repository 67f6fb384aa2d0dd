#!/usr/bin/env bash
# xdp-fwd --pcap: the file parses as pcap and holds the frames xdp-fwd sent, whole or cut to
# the snap length, only those the filter takes, at most --pcap-count; its books match the
# stats (captured + capture dropped = frames sent that the filter takes); bad --pcap input is
# refused before anything is attached.
. "$(dirname "$0")/lib.sh"

READ=(python3 "$SRC/test/fwd/pcapread.py")
# ping -s 1111 -p 5aa5c33c: Ethernet 14 + IPv4 20 + ICMP 8 + 1111 bytes.
PING_LEN=1153
PATTERN=5aa5c33c5aa5c33c

# cap_total FIELD: a field of the "capture" object of the "total" JSON line.
cap_total() {
	grep '"type":"total"' "$WORK/fwd.out" | grep -o '"capture":{[^}]*}' | grep -o "\"$1\":[0-9]*" | cut -d: -f2
}

sent_total() {
	echo $(($(port_total "$TOPO_IF0@0" tx_packets) + $(port_total "$TOPO_IF1@0" tx_packets)))
}

# records FILE: the record lines of pcapread.py's output (fails the test on a bad file).
records() {
	"${READ[@]}" "$@" >"$WORK/read.out" 2>"$WORK/read.err" || fail "$1 is not a valid pcap file: $(cat "$WORK/read.err")"
	tail -n +2 "$WORK/read.out"
}

pings() {
	in_host 0 ping -c 5 -i 0.1 -W 2 -s 1111 -p 5aa5c33c "$TOPO_IP1" >/dev/null || fail "ping through xdp-fwd"
}

topo_up --hosts 2

log "every frame sent, whole; the books match the stats"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.5 --pcap "$WORK/all.pcap"
grep -q "pcap $WORK/all.pcap: the frames sent, at most 262144 bytes each" "$WORK/fwd.err" ||
	fail "no pcap line at start: $(cat "$WORK/fwd.err")"
pings
fwd_stop INT
records "$WORK/all.pcap" "$PATTERN" >"$WORK/all.txt"
head -1 "$WORK/read.out" | grep -qx "header 262144 1" || fail "header: $(head -1 "$WORK/read.out")"
n=$(wc -l <"$WORK/all.txt")
captured=$(cap_total captured) dropped=$(cap_total dropped) sent=$(sent_total)
echo "   $n records; captured $captured, capture dropped $dropped, sent $sent"
[ "$n" = "$captured" ] || fail "$n records in the file, the stats say $captured captured"
[ $((captured + dropped)) = "$sent" ] || fail "captured $captured + dropped $dropped != $sent frames sent"
[ "$dropped" = 0 ] || fail "$dropped frames dropped from a 4 MiB ring by 5 pings"
req=$(grep -c "^$PING_LEN $PING_LEN $TOPO_MAC1 0x0800 1 1$" "$WORK/all.txt")
rep=$(grep -c "^$PING_LEN $PING_LEN $TOPO_MAC0 0x0800 1 1$" "$WORK/all.txt")
[ "$req" = 5 ] && [ "$rep" = 5 ] || fail "$req echo requests to host 1 and $rep replies to host 0 in the file, not 5 and 5"
# libpcap's reader agrees, where tcpdump is installed.
if command -v tcpdump >/dev/null; then
	tcpdump -nn -r "$WORK/all.pcap" >"$WORK/td.out" 2>"$WORK/td.err" || fail "tcpdump -r: $(cat "$WORK/td.err")"
	[ "$(wc -l <"$WORK/td.out")" = "$n" ] || fail "tcpdump reads $(wc -l <"$WORK/td.out") frames, not $n"
	[ "$(grep -c "ICMP echo request.*length 1119" "$WORK/td.out")" = 5 ] || fail "tcpdump: $(cat "$WORK/td.out")"
	echo "   tcpdump -r reads the same $n frames"
fi

log "--pcap-filter 'dev IF1 icmp' and --pcap-snaplen 64: only the requests, cut"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.5 --pcap "$WORK/f.pcap" \
	--pcap-filter "dev $TOPO_IF1 icmp" --pcap-snaplen 64
pings
fwd_stop INT
records "$WORK/f.pcap" >"$WORK/f.txt"
head -1 "$WORK/read.out" | grep -qx "header 64 1" || fail "header: $(head -1 "$WORK/read.out")"
[ "$(sort -u "$WORK/f.txt")" = "64 $PING_LEN $TOPO_MAC1 0x0800 1" ] || fail "records: $(sort "$WORK/f.txt" | uniq -c)"
[ "$(wc -l <"$WORK/f.txt")" = 5 ] && [ "$(cap_total captured)" = 5 ] && [ "$(cap_total dropped)" = 0 ] ||
	fail "$(wc -l <"$WORK/f.txt") records, captured $(cap_total captured), dropped $(cap_total dropped): not 5, 5, 0"

log "a filter that takes nothing: a file of the header alone"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --pcap "$WORK/none.pcap" --pcap-filter "udp dport 9"
pings
fwd_stop INT
[ -z "$(records "$WORK/none.pcap")" ] && [ "$(cap_total captured)" = 0 ] && [ "$(cap_total dropped)" = 0 ] ||
	fail "a filter matching nothing captured $(cap_total captured), dropped $(cap_total dropped)"

log "--pcap-count 3: three frames, then the capture stops and forwarding goes on"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --pcap "$WORK/c.pcap" --pcap-filter icmp --pcap-count 3
pings
fwd_stop INT
[ "$(records "$WORK/c.pcap" | wc -l)" = 3 ] && [ "$(cap_total captured)" = 3 ] ||
	fail "--pcap-count 3: $(records "$WORK/c.pcap" | wc -l) records, captured $(cap_total captured)"
grep '"type":"total"' "$WORK/fwd.out" | grep -q '"stopped":"count reached"' || fail "no 'count reached' in the totals"

log "a FIFO: a reader gets the frames as they go"
mkfifo "$WORK/live.pcap" || fail "mkfifo"
"${READ[@]}" "$WORK/live.pcap" >"$WORK/live.out" 2>"$WORK/live.err" &
reader=$!
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --pcap "$WORK/live.pcap" --pcap-filter icmp
pings
# The writer wakes at least every 100 ms: the reader has every frame while xdp-fwd still runs.
wait_for 5 sh -c "[ \$(grep -c ' 0x0800 1\$' '$WORK/live.out') = 10 ]" ||
	fail "the FIFO's reader got $(grep -c ' 0x0800 1$' "$WORK/live.out") of 10 ICMP frames while xdp-fwd ran"
fwd_stop INT
wait "$reader" || fail "the FIFO's reader: $(cat "$WORK/live.err")"
[ "$(cap_total captured)" = 10 ] || fail "captured $(cap_total captured), not 10"

log "TCP, two workers, 64 KiB rings: what does not fit is counted, never waited for"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -w 2 --json --pcap "$WORK/tcp.pcap" --pcap-buffer 64
iperf_server
in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 -n 20M >"$WORK/iperf.out" 2>&1 || fail "iperf3: $(cat "$WORK/iperf.out")"
netns_stop "$IPERF_PID"
fwd_stop INT
n=$(records "$WORK/tcp.pcap" | wc -l)
captured=$(cap_total captured) dropped=$(cap_total dropped) sent=$(sent_total)
echo "   $n records; captured $captured, capture dropped $dropped, sent $sent"
[ "$sent" -gt 10000 ] || fail "$sent frames sent: too few for 20 MiB of TCP"
[ "$n" = "$captured" ] && [ $((captured + dropped)) = "$sent" ] ||
	fail "$n records, captured $captured + dropped $dropped against $sent sent"

log "bad --pcap input: refused, nothing attached"
expect_refusal() { # RC MESSAGE ARGS...
	local want=$1 msg=$2 rc=0
	shift 2
	ip netns exec "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
	[ "$rc" = "$want" ] || fail "xdp-fwd $*: rc $rc, not $want: $(cat "$WORK/err")"
	grep -q -- "$msg" "$WORK/err" || fail "xdp-fwd $*: no '$msg' in: $(cat "$WORK/err")"
	no_xdp_left || fail "xdp-fwd $*: an XDP program was left attached"
	echo "   $* -> rc $rc: $(grep -- "$msg" "$WORK/err" | head -1)"
}
expect_refusal 1 "pcap $WORK/no/such/dir.pcap: cannot open it: No such file or directory" --pcap "$WORK/no/such/dir.pcap"
expect_refusal 1 "cannot open it: Is a directory" --pcap "$WORK"
expect_refusal 2 "not a match of the rule language" --pcap "$WORK/x.pcap" --pcap-filter "udp dprt 53"
expect_refusal 2 "a match only, without '->'" --pcap "$WORK/x.pcap" --pcap-filter "udp -> drop"
expect_refusal 2 "dev nosuch0 is not an interface given with -i" --pcap "$WORK/x.pcap" --pcap-filter "dev nosuch0"
expect_refusal 2 "need --pcap FILE" --pcap-count 5
log "ok"
