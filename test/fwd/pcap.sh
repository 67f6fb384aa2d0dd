#!/usr/bin/env bash
# xdp-fwd --pcap: the file parses as pcap and holds the frames xdp-fwd sent, whole or cut to
# the snap length, only those the filter takes, at most --pcap-count; its books match the
# stats (captured + capture dropped = frames sent that the filter takes); a FIFO reader that
# leaves or stalls, and a file size limit, stop the capture, never xdp-fwd; bad --pcap input is
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

log "the FIFO's reader goes away: the capture stops, named; forwarding goes on"
mkfifo "$WORK/gone.pcap" || fail "mkfifo"
netns_bg reader "$TOPO_MID" head -c 100 "$WORK/gone.pcap" >/dev/null
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --pcap "$WORK/gone.pcap" --pcap-filter icmp
pings
wait "$reader" # it has read its 100 bytes: gone
netns_stop "$reader"
pings # still forwarded; the writer's next write finds no reader (EPIPE; SIGPIPE is ignored)
wait_for 5 grep -q "pcap $WORK/gone.pcap: cannot write: Broken pipe; capture stopped (forwarding goes on)" "$WORK/fwd.err" ||
	fail "no write error for the FIFO whose reader left: $(cat "$WORK/fwd.err")"
fwd_stop INT
grep '"type":"total"' "$WORK/fwd.out" | grep -q '"stopped":"Broken pipe"' || fail "no 'Broken pipe' in the totals"

log "a FIFO's reader that reads nothing: xdp-fwd still exits, and says what it could not write"
mkfifo "$WORK/stall.pcap" || fail "mkfifo"
# Holds the FIFO open for reading and never reads (a suspended tcpdump, a pager).
netns_bg staller "$TOPO_MID" sh -c 'exec sleep 600 <"$1"' sh "$WORK/stall.pcap"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 60 --pcap "$WORK/stall.pcap" --pcap-filter icmp
# 120 frames of 1169 bytes of record: more than the pipe holds (64 KiB), so the writer waits.
in_host 0 ping -c 60 -i 0.01 -W 2 -s 1111 "$TOPO_IP1" >/dev/null || fail "ping through xdp-fwd"
kill -INT "$FWD_PID"
if ! wait_for 20 grep -q '"type":"exit"' "$WORK/fwd.out"; then
	kill -KILL "$FWD_PID" # it cannot take SIGTERM here (blocked), nor would cleanup's wait end
	fail "xdp-fwd did not exit within 20 s of SIGINT with a FIFO reader that does not read"
fi
fwd_reap
grep -q "pcap $WORK/stall.pcap: the reader has taken nothing for 2 s since the stop; capture stopped" "$WORK/fwd.err" &&
	grep -q "frames captured are not in the file" "$WORK/fwd.err" || fail "the stalled reader not named: $(cat "$WORK/fwd.err")"
grep '"type":"total"' "$WORK/fwd.out" | grep -q '"stopped":"the reader stalled"' || fail "no 'the reader stalled' in the totals"
netns_stop "$staller"
no_xdp_left || fail "an XDP program was left attached"

log "ulimit -f: the file stops at its last whole record (EFBIG, not SIGXFSZ), forwarding goes on"
# 16 KiB takes about 13 of the 20 records; xdp-fwd's own output stays below it.
netns_bg FWD_PID "$TOPO_MID" prlimit --fsize=16384 "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 60 \
	--pcap "$WORK/big.pcap" --pcap-filter icmp >"$WORK/fwd.out" 2>"$WORK/fwd.err"
wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start: $(cat "$WORK/fwd.err")"
in_host 0 ping -c 10 -i 0.05 -W 2 -s 1111 "$TOPO_IP1" >/dev/null || fail "ping through xdp-fwd"
wait_for 5 grep -q "pcap $WORK/big.pcap: cannot write: File too large" "$WORK/fwd.err" ||
	fail "no write error past the file size limit: $(cat "$WORK/fwd.err")"
pings # forwarding goes on
fwd_stop INT
n=$(records "$WORK/big.pcap" | wc -l) # fails on a record cut in the middle
size=$(stat -c %s "$WORK/big.pcap")
echo "   $n whole records, $size bytes"
[ "$size" = $((24 + n * (16 + PING_LEN))) ] && [ "$n" -ge 10 ] || fail "$size bytes for $n records"
grep '"type":"total"' "$WORK/fwd.out" | grep -q '"stopped":"File too large"' || fail "no 'File too large' in the totals"

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
expect_refusal 1 "pcap /dev/full: cannot write to it: No space left on device" --pcap /dev/full
# Not even the header fits (ulimit -f): an error, not a death by SIGXFSZ. The messages go
# through a pipe, which the limit does not cut.
rc=0
ip netns exec "$TOPO_MID" prlimit --fsize=10 "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --pcap "$WORK/tiny.pcap" \
	</dev/null 2>&1 | cat >"$WORK/err" || rc=${PIPESTATUS[0]}
[ "$rc" = 1 ] && grep -q "pcap $WORK/tiny.pcap: cannot write to it: File too large" "$WORK/err" ||
	fail "a file size limit below the header: rc $rc: $(cat "$WORK/err")"
no_xdp_left || fail "an XDP program was left attached"
log "ok"
