#!/usr/bin/env bash
# --control and xdp-fwdctl under a UDP stream: stats, ports, workers, a rule added, matched,
# listed and removed, the configuration's rule kept, reload (as SIGHUP), latency; a malformed
# and an oversized request answered with an error line; clients that go away mid-reply, stall
# or send half a line cost nothing (xdp-fwd forwards on and answers the next client at once); a
# peer of another uid is refused (by the file's mode, and by SO_PEERCRED when the file lets it
# through); --control-group lets that group in. The books balance (sent = received + every
# counted drop), the socket file goes at exit, a socket in use refuses a second start.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
[ -x "$CTL" ] || fail "xdp-fwdctl not built at $CTL"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"
command -v setpriv >/dev/null || { echo "SKIP: no setpriv (util-linux)"; exit 77; }

topo_up --hosts 3 # m2: a second xdp-fwd's interface
SOCK=$WORK/ctl.sock
CONF=$WORK/lab.conf
cat >"$CONF" <<EOT
interface = $TOPO_IF0
interface = $TOPO_IF1
mode = wire
json = yes
interval = 5
rule = "udp dport 9999 -> drop"
control = $SOCK
EOT
alive() { kill -0 "$FWD_PID" 2>/dev/null; }
# raw PYTHON-BYTES: one connection that sends the bytes and prints what comes back.
raw() {
	python3 - "$SOCK" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(5)
try:
    s.sendall(eval(sys.argv[2]))
except (BrokenPipeError, ConnectionResetError):
    pass  # refused: the reply is still there to read
data = b""
while True:
    try:
        b = s.recv(65536)
    except ConnectionResetError:
        break
    if not b:
        break
    data += b
sys.stdout.write(data.decode("ascii", "replace"))
EOF
}

fwd_start --config "$CONF"
[ -S "$SOCK" ] || fail "no socket at $SOCK"
[ "$(stat -c %a "$SOCK")" = 600 ] || fail "socket mode $(stat -c %a "$SOCK"), expected 600"
grep -q "control socket $SOCK" "$WORK/fwd.err" || fail "the banner does not name the socket"

log "a UDP stream through xdp-fwd while the client works"
sink_start "$TOPO_H1" --idle 3
netns_bg GEN_PID "$TOPO_H0" "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --rate 20000 --duration 8 \
	>"$WORK/gen.out" 2>"$WORK/gen.err"

ctl_expect 0 "$WORK/c" version
grep -q "^xdp-fwd [0-9]*\.[0-9]*.*wire mode" "$WORK/c" || fail "version: $(cat "$WORK/c")"
ctl_expect 0 "$WORK/c" stats
grep -q "^$TOPO_IF0@0 .*rx" "$WORK/c" && grep -q "^$TOPO_IF1@0 " "$WORK/c" || fail "stats: $(cat "$WORK/c")"
ctl_expect 0 "$WORK/c" --json stats
grep -q '^{"type":"stats",.*"counts":"total","ports":\[{"name":"'"$TOPO_IF0"'@0"' "$WORK/c" || fail "--json stats: $(cat "$WORK/c")"
ctl_expect 0 "$WORK/c" ports
[ "$(grep -cE "^[01] +($TOPO_IF0|$TOPO_IF1)@0 +($TOPO_IF0|$TOPO_IF1) +0 +0 +copy +steering program +up " "$WORK/c")" = 2 ] ||
	fail "ports: $(cat "$WORK/c")"
ctl_expect 0 "$WORK/c" workers
grep -qE "^0 +- +$TOPO_IF0@0,$TOPO_IF1@0 " "$WORK/c" || fail "workers: $(cat "$WORK/c")"

log "rules: one added at run time takes frames, is listed, and goes; the configuration's stays"
ctl_expect 0 "$WORK/c" rules add udp dport 7777 '->' drop
id=$(sed -n "s/^$TOPO_IF0: rule \([0-9]*\): udp dport 7777 -> drop$/\1/p" "$WORK/c")
[ -n "$id" ] && grep -q "^$TOPO_IF1: rule $id: " "$WORK/c" || fail "rules add: $(cat "$WORK/c")"
for i in 1 2 3 4 5; do in_host 0 bash -c "echo x >/dev/udp/$TOPO_IP1/7777"; done
hits7777() { ctl rules list | awk -v i="$TOPO_IF0" -v id="$id" '$1 == i && $2 == id && $3 == "runtime" { print $4 }'; }
five_hits() { [ "$(hits7777)" = 5 ]; }
wait_for 5 five_hits || fail "the added rule has '$(hits7777)' hits, expected 5: $(ctl rules list)"
ctl_expect 0 "$WORK/c" --json rules
grep -q '{"interface":"'"$TOPO_IF0"'","id":0,"origin":"config","hits":0,"rule":"udp dport 9999 -> drop"}' "$WORK/c" ||
	fail "--json rules: $(cat "$WORK/c")"
ctl_expect 1 "$WORK/c" rules remove 0
grep -q "error: rules remove: rule 0 is the configuration's" "$WORK/c" || fail "$(cat "$WORK/c")"
ctl_expect 1 "$WORK/c" rules add udp dport 53 '->' sock 5
grep -q "no port serves socket 5" "$WORK/c" || fail "a rule to no socket: $(cat "$WORK/c")"
ctl_expect 0 "$WORK/c" rules remove "$id"
ctl_expect 1 "$WORK/c" rules remove "$id"
grep -q "error: rules remove: no rule $id" "$WORK/c" || fail "$(cat "$WORK/c")"
ctl rules list | grep -q "7777" && fail "the removed rule is still listed"

log "reload (as SIGHUP), latency"
ctl_expect 0 "$WORK/c" reload
grep -q "reloaded $CONF" "$WORK/c" || fail "reload: $(cat "$WORK/c")"
wait_for 5 grep -q "reload: $CONF unchanged" "$WORK/fwd.err" || fail "no reload in the log"
ctl_expect 0 "$WORK/c" latency saver
ctl_expect 1 "$WORK/c" latency low
grep -q "cannot change live" "$WORK/c" || fail "latency low: $(cat "$WORK/c")"
ctl_expect 1 "$WORK/c" mac
ctl_expect 1 "$WORK/c" flows

log "bad requests: an error line, nothing changed"
ctl_expect 1 "$WORK/c" rules add this is no rule
grep -q "^xdp-fwdctl: error: rules add: 'this is no rule' is not a steering rule" "$WORK/c" || fail "$(cat "$WORK/c")"
ctl_expect 1 "$WORK/c" statz
reply=$(raw 'b"stats\x01\n"')
[ "$(printf '%s' "$reply" | head -1)" = "error: byte 5 of the request is 0x01: requests are printable ASCII" ] &&
	[ "$(printf '%s\n' "$reply" | tail -1)" = "." ] || fail "malformed request: '$reply'"
reply=$(raw 'b"rules add " + b"x" * 5000 + b"\n"')
[ "$reply" = "$(printf 'error: request longer than 4096 bytes\n.')" ] || fail "oversized request: '$reply'"

log "clients that stall, send half a line or go away mid-reply cost nothing"
python3 - "$SOCK" >"$WORK/rude.out" 2>&1 <<'EOF' &
import socket, sys, time
socks = []
for req in (b"", b"sta"):  # one silent, one with half a request: both held open
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(req)
    socks.append(s)
for _ in range(20):  # the rest ask for the longest replies and close without reading them
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.connect(sys.argv[1])
    try:  # every slot in use (a busy machine): the server says "busy" and closes first
        s.sendall(b"--json stats\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
    s.close()
time.sleep(3)
EOF
RUDE=$!
t0=$(date +%s%N)
ctl_expect 0 "$WORK/c" -t 2 --json workers
t1=$(date +%s%N)
log "the next client answered in $(((t1 - t0) / 1000000)) ms"
# The two held connections keep their slots for FWD_CONTROL_TIMEOUT_MS (5 s): an answer well
# before that did not wait for them.
[ $(((t1 - t0) / 1000000)) -lt 4000 ] || fail "the next client waited $(((t1 - t0) / 1000000)) ms"
grep -q '"workers":\[{"worker":0' "$WORK/c" || fail "--json workers: $(cat "$WORK/c")"
wait "$RUDE" || fail "the rude clients: $(cat "$WORK/rude.out")"
alive || fail "xdp-fwd stopped"

log "a peer of another uid: refused by the file's mode, and by SO_PEERCRED past it"
chmod 711 "$WORK" # the socket's own mode is what is tested
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" -s "$SOCK" stats >"$WORK/c" 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "permission denied" "$WORK/c" || fail "nobody: exit $rc: $(cat "$WORK/c")"
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+dac_override --ambient-caps=+dac_override \
	"$CTL" -s "$SOCK" stats >"$WORK/c" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "error: permission denied: uid 65534 is not root" "$WORK/c" ||
	fail "nobody with CAP_DAC_OVERRIDE: exit $rc: $(cat "$WORK/c")"
grep -q "control: refused a client: permission denied: uid 65534" "$WORK/fwd.err" || fail "the refusal is not logged"

wait "$GEN_PID" || fail "gen: $(cat "$WORK/gen.err")"
netns_stop "$GEN_PID"
sink_wait
ctl_expect 0 "$WORK/c" help
grep -q "^rules add RULE" "$WORK/c" || fail "help: $(cat "$WORK/c")"
fwd_stop INT
[ -e "$SOCK" ] && fail "the socket file is left after exit"
gen_books "$WORK/gen.out" "$WORK/sink.out" "$TOPO_IF0@0" "$TOPO_IF1@0"
[ "$BOOKS_SENT" -gt 10000 ] || fail "the generator sent $BOOKS_SENT"
no_xdp_left || fail "an XDP program left"

log "--control-group: its members get in; a socket in use refuses a second xdp-fwd"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --control "$SOCK" --control-group nogroup
[ "$(stat -c '%a %G' "$SOCK")" = "660 nogroup" ] || fail "socket $(stat -c '%a %G' "$SOCK"), expected 660 nogroup"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" -s "$SOCK" version >"$WORK/c" 2>&1 ||
	fail "a member of the control group: $(cat "$WORK/c")"
rc=0
ip netns exec "$TOPO_MID" "$FWD" -i "$TOPO_IF2" --mode reflect --control "$SOCK" --quiet --duration 1 \
	>"$WORK/second.out" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "cannot serve the control socket: another process answers on it" "$WORK/second.out" ||
	fail "a second xdp-fwd on the socket: exit $rc: $(cat "$WORK/second.out")"
ctl_expect 0 "$WORK/c" version
fwd_stop INT
[ -e "$SOCK" ] && fail "the socket file is left after exit"

log "the default path (outside the initial network namespace: NAME@net<inode>), and none"
ino=$(ip netns exec "$TOPO_MID" stat -L -c %i /proc/self/ns/net)
DEF=/run/xdp-fwd/$TOPO_IF0@net$ino.sock
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
[ -S "$DEF" ] || fail "no socket at $DEF: $(cat "$WORK/fwd.err")"
"$CTL" -s "$DEF" version >"$WORK/c" 2>&1 || fail "the default socket: $(cat "$WORK/c")"
fwd_stop INT
[ -e "$DEF" ] && fail "$DEF is left after exit"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --control none
[ -e "$DEF" ] && fail "--control none made $DEF"
grep -q "control socket" "$WORK/fwd.err" && fail "--control none: the banner names a socket"
fwd_stop INT
log "ok"
