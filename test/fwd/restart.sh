#!/usr/bin/env bash
# xdp-fwdctl restart: the running xdp-fwd starts its successor, which takes over, and a service
# manager follows it. xdp-fwd runs as a unit's main process would: under notify_listen.py
# (NOTIFY_SOCKET, WATCHDOG_PID/WATCHDOG_USEC, a subreaper that logs every exit), from a copy of
# the binary, with --config. Under a 10 ms ping, `xdp-fwdctl restart`: the reply names the new
# pid; the old pid says RELOADING=1 then MAINPID=<new pid>, the new pid READY=1 and WATCHDOG=1
# (the watchdog is its own now); the old pid exits 0 without STOPPING=1; pings lost within
# fwd_takeover's bound; the counters go on; the new instance's command line holds --takeover
# once. Then a second restart from it by SIGUSR2, and the last stop: STOPPING=1 from the last
# pid, every exit 0, every frame back. Before that, the restarts that fail: a configuration
# made invalid on disk (its successor exits 2) and a binary made non-executable: each reply
# names why, the instance runs on and forwards, RELOADING=1 is followed by READY=1 from it.
# xdp-fwd runs with the installed unit's capabilities (CapabilityBoundingSet: no
# CAP_SYS_ADMIN), so its successors cannot open the running steering program by id (the kernel
# allows that CAP_SYS_ADMIN only): they open it from the program's and maps' descriptors that
# come with the handover, and the restarts work all the same.
# Nothing is left: no process, no XDP program, no socket file.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 not installed" >&2; exit 77; }

topo_up --hosts 2
SOCK=$WORK/ctl.sock
NSOCK=$WORK/notify.sock
LOG=$WORK/notify.log
BIN=$WORK/bin/xdp-fwd
mkdir -p "$WORK/bin" && cp "$FWD" "$BIN" || fail "cannot copy $FWD"
CONF=$WORK/edge.conf
cat >"$CONF" <<EOF
interface = $TOPO_IF0
interface = $TOPO_IF1
mode = wire
rule = udp dport 9999 -> drop
control = $SOCK
EOF
cp "$CONF" "$CONF.good"
ARGS=(--config "$CONF" --json --interval 1)

# total FILE PORT FIELD: a port's count in a `--json stats` reply.
total() { grep -o "\"name\":\"$2\",[^}]*" "$1" | grep -o "\"$3\":[0-9]*" | head -1 | cut -d: -f2; }
# said PID TEXT: the notify log has a message of PID's that starts with TEXT.
said() { grep -q "^$1 $2" "$LOG"; }
# messages PID: PID's messages but WATCHDOG=1, their first field each, on one line.
messages() { awk -v p="$1" '$1 == p && $2 != "WATCHDOG=1" { printf "%s ", $2 }' "$LOG"; }
exited() { grep -q "^exit $1 " "$LOG"; }
exit_code() { sed -n "s/^exit $1 //p" "$LOG"; }
forwards() { in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null; }

log "the bound: a plain stop and start under the 10 ms ping"
fwd_start "${ARGS[@]}"
restart_bound "${ARGS[@]}"
fwd_stop

log "xdp-fwd as a unit's main process: READY=1, its watchdog"
: >"$WORK/fwd.out"
: >"$WORK/fwd.err"
: >"$LOG"
# The unit's CapabilityBoundingSet (apps/xdp-fwd/xdp-fwd@.service.in), no CAP_SYS_ADMIN.
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$SRC/apps/xdp-fwd/xdp-fwd@.service.in" | tr 'A-Z ' 'a-z,' | sed 's/cap_/+/g')
[ -n "$CAPS" ] || fail "no CapabilityBoundingSet in the unit"
WATCHDOG_USEC=400000 netns_bg SUP_PID "$TOPO_MID" python3 "$SRC/test/fwd/notify_listen.py" --service "$NSOCK" "$LOG" \
	-- setpriv --bounding-set="-all,$CAPS" -- "$BIN" "${ARGS[@]}" >"$WORK/fwd.out" 2>"$WORK/fwd.err"
wait_for 5 grep -q "^start " "$LOG" || fail "notify_listen.py did not start xdp-fwd: $(cat "$LOG")"
OLD=$(sed -n 's/^start //p' "$LOG")
wait_for 10 said "$OLD" "READY=1" || fail "no READY=1 from pid $OLD: $(cat "$LOG") $(cat "$WORK/fwd.err")"
grep "capabilities dropped" "$WORK/fwd.err" | grep -q "sys_admin" &&
	fail "pid $OLD keeps CAP_SYS_ADMIN: $(grep "capabilities dropped" "$WORK/fwd.err")"
[ "$(awk '/^CapBnd:/ { print $2 }' "/proc/$OLD/status")" = "$(printf '%016x' $(( (1 << 12) | (1 << 13) | (1 << 14) | (1 << 38) | (1 << 39) )))" ] ||
	fail "pid $OLD's bounding set is not the unit's: $(grep CapBnd "/proc/$OLD/status")"
wait_for 5 said "$OLD" "WATCHDOG=1" || fail "no WATCHDOG=1 from pid $OLD: $(cat "$LOG")"
forwards || fail "no path through xdp-fwd"

log "a restart whose configuration is invalid on disk: refused, the instance runs on"
echo "no-such-option = 1" >>"$CONF"
ctl_expect 1 "$WORK/r-conf" restart
grep -q "restart: the new xdp-fwd (pid [0-9]*) exited with status 2 before taking over: .*no-such-option.*; this one runs on, nothing changed" \
	"$WORK/r-conf" || fail "the reply does not name the failure: $(cat "$WORK/r-conf")"
kill -0 "$OLD" || fail "xdp-fwd stopped after a failed restart"
forwards || fail "no path through xdp-fwd after a failed restart"
wait_for 5 eval '[ "$(messages "$OLD")" = "READY=1 RELOADING=1 READY=1 " ]' ||
	fail "pid $OLD's messages across a failed restart: $(messages "$OLD")"
grep -q "no-such-option" "$WORK/fwd.err" || fail "the successor's error is not in xdp-fwd's log: $(cat "$WORK/fwd.err")"
cp "$CONF.good" "$CONF"

log "a restart whose binary cannot be run: refused, nothing changed"
chmod a-x "$BIN"
ctl_expect 1 "$WORK/r-exec" restart
chmod a+x "$BIN"
grep -qF "restart: cannot run $BIN: Permission denied; this xdp-fwd runs on, nothing changed" "$WORK/r-exec" ||
	fail "the reply does not name the failure: $(cat "$WORK/r-exec")"
forwards || fail "no path through xdp-fwd after a refused restart"
[ "$(messages "$OLD")" = "READY=1 RELOADING=1 READY=1 " ] || fail "pid $OLD's messages: $(messages "$OLD")"

log "xdp-fwdctl restart under a 10 ms ping"
ctl --json stats >"$WORK/before" || fail "stats before"
netns_bg PING_PID "$TOPO_H0" ping -i 0.01 -c 400 -W 1 "$TOPO_IP1" >"$WORK/ping" 2>&1
sleep 1 # the ping under way: a window, nothing to await
ctl restart >"$WORK/r-ok" 2>&1 || fail "restart: $(cat "$WORK/r-ok")"
NEW=$(sed -n "s/^restarted: pid \([0-9]*\) took over from pid $OLD$/\1/p" "$WORK/r-ok")
[ -n "$NEW" ] || fail "restart's reply: $(cat "$WORK/r-ok")"
wait_for 10 exited "$OLD" || fail "pid $OLD did not exit after the restart"
[ "$(exit_code "$OLD")" = 0 ] || fail "pid $OLD exited with $(exit_code "$OLD")"
wait_for 10 said "$NEW" "READY=1" || fail "no READY=1 from pid $NEW: $(cat "$LOG")"
[ "$(messages "$OLD")" = "READY=1 RELOADING=1 READY=1 RELOADING=1 MAINPID=$NEW " ] ||
	fail "pid $OLD's messages: $(messages "$OLD")"
# MAINPID= before the successor's first message: systemd takes READY=1 from the main pid only.
first_new=$(grep -n "^$NEW " "$LOG" | head -1 | cut -d: -f1)
mainpid=$(grep -n "^$OLD MAINPID=$NEW" "$LOG" | cut -d: -f1)
[ "$mainpid" -lt "$first_new" ] || fail "MAINPID=$NEW came after pid $NEW's first message: $(cat "$LOG")"
wait_for 5 said "$NEW" "WATCHDOG=1" || fail "no WATCHDOG=1 from pid $NEW (WATCHDOG_PID passed on?): $(cat "$LOG")"
wait "$PING_PID"
LOST=$(ping_lost "$WORK/ping")
log "pings lost across the restart: $LOST of 400 (at most $MAX_LOST)"
[ -n "$LOST" ] && [ "$LOST" -le "$MAX_LOST" ] || fail "$LOST pings lost across the restart: $(tail -3 "$WORK/ping")"
forwards || fail "no path through the new xdp-fwd"
# The programs went as descriptors: per interface its link, program and (at least 9) maps,
# besides the control socket.
nfd=$(sed -n 's/^xdp-fwd: handed over to a new xdp-fwd (\([0-9]*\) descriptors); stopping$/\1/p' "$WORK/fwd.err" | head -1)
[ -n "$nfd" ] && [ "$nfd" -ge 23 ] || fail "pid $OLD handed over ${nfd:-no} descriptors: $(grep "handed over" "$WORK/fwd.err")"
ctl --json stats >"$WORK/after" || fail "stats after"
for f in rx_packets tx_packets; do
	for p in "$TOPO_IF0@0" "$TOPO_IF1@0"; do
		a=$(total "$WORK/before" "$p" $f) b=$(total "$WORK/after" "$p" $f)
		[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] || fail "$p $f went from '$a' to '$b' across the restart"
	done
done
[ "$(tr '\0' '\n' <"/proc/$NEW/cmdline" | grep -c '^--takeover$')" = 1 ] || fail "pid $NEW: $(tr '\0' ' ' <"/proc/$NEW/cmdline")"

log "a restart by SIGUSR2 (systemctl kill -s USR2), from the instance a restart started"
kill -USR2 "$NEW"
wait_for 10 said "$NEW" "MAINPID=" || fail "no MAINPID= from pid $NEW after SIGUSR2: $(cat "$LOG") $(tail -5 "$WORK/fwd.err")"
LAST=$(sed -n "s/^$NEW MAINPID=\([0-9]*\).*/\1/p" "$LOG")
wait_for 10 said "$LAST" "READY=1" || fail "no READY=1 from pid $LAST: $(cat "$LOG")"
wait_for 10 exited "$NEW" || fail "pid $NEW did not exit after the restart"
[ "$(exit_code "$NEW")" = 0 ] || fail "pid $NEW exited with $(exit_code "$NEW")"
[ "$(messages "$NEW")" = "READY=1 RELOADING=1 MAINPID=$LAST " ] || fail "pid $NEW's messages: $(messages "$NEW")"
[ "$(tr '\0' '\n' <"/proc/$LAST/cmdline" | grep -c '^--takeover$')" = 1 ] || fail "pid $LAST: $(tr '\0' ' ' <"/proc/$LAST/cmdline")"
forwards || fail "no path through xdp-fwd after the second restart"

log "the last one stops: STOPPING=1 from it, every exit 0, every frame back"
kill -TERM "$LAST"
wait "$SUP_PID" || fail "notify_listen.py: $?"
netns_stop "$SUP_PID"
[ "$(exit_code "$LAST")" = 0 ] || fail "pid $LAST exited with '$(exit_code "$LAST")'"
[ "$(messages "$LAST")" = "READY=1 STOPPING=1 " ] || fail "pid $LAST's messages: $(messages "$LAST")"
[ "$(grep -c '"frames_out":0' "$WORK/fwd.out")" = 3 ] || fail "not every instance had its frames back: $(grep frames_out "$WORK/fwd.out")"
[ "$(grep -c "^exit " "$LOG")" = 3 ] || fail "exits: $(grep "^exit " "$LOG")"
no_xdp_left || fail "an XDP program is left"
[ -e "$SOCK" ] && fail "the socket file is left"
echo PASS
