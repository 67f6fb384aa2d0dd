#!/usr/bin/env bash
# xdp-fwd l2 mode, three hosts on three ports:
#  - an ARP broadcast reaches every other port exactly once, never the port it came from;
#  - after learning, unicast goes only to its port (the third host sees nothing);
#  - after the aging time, the next unicast to the aged MAC is flooded again.
# Hosts have IPv6 off (topo.sh), so the only frames are the ones the test sends.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 3
# Long enough that the learned entries outlive the gap between the sections on a loaded
# machine (at 1 s, host 1's entry aged out there and the next echo was rightly flooded).
AGING=5
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -i "$TOPO_IF2" --mode l2 --l2-aging $AGING --json --interval 0.5

log "ARP broadcast from host 0 is flooded to ports 1 and 2 once each"
before0=$(rx_frames 0); before1=$(rx_frames 1); before2=$(rx_frames 2)
in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "ping host0 -> host1"
# host 1 got the ARP request and the echo request; host 2 only the ARP request; host 0 the
# ARP reply and the echo reply (nothing of its own flooded back).
[ $(($(rx_frames 1) - before1)) = 2 ] || fail "host 1 received $(($(rx_frames 1) - before1)) frames, expected 2"
[ $(($(rx_frames 2) - before2)) = 1 ] || fail "host 2 received $(($(rx_frames 2) - before2)) frames, expected 1 (the ARP broadcast)"
[ $(($(rx_frames 0) - before0)) = 2 ] || fail "host 0 received $(($(rx_frames 0) - before0)) frames, expected 2"

# From here on no ARP: the hosts' kernels would probe each other 5 s after the pings below
# (delay_first_probe_time), refreshing the entries the aging section waits out.
in_host 0 ip neigh replace "$TOPO_IP1" lladdr "$TOPO_MAC1" dev eth0 nud permanent || fail "host 0's neighbour"
in_host 1 ip neigh replace "$TOPO_IP0" lladdr "$TOPO_MAC0" dev eth0 nud permanent || fail "host 1's neighbour"

log "learned unicast goes only to its port"
before2=$(rx_frames 2)
in_host 0 ping -c 20 -i 0.01 -W 2 "$TOPO_IP1" >/dev/null || fail "ping host0 -> host1"
in_host 1 ping -c 20 -i 0.01 -W 2 "$TOPO_IP0" >/dev/null || fail "ping host1 -> host0"
[ "$(rx_frames 2)" = "$before2" ] || fail "host 2 saw $(($(rx_frames 2) - before2)) unicast frames between hosts 0 and 1"

log "after $AGING s of silence, host 1's MAC has aged out: the next frame to it is flooded"
before2=$(rx_frames 2)
# Aging is the behaviour under test, so this waits out the aging time itself (nothing else
# could be awaited: the point is that no frame refreshes the entry meanwhile).
sleep $((AGING + 1))
in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "ping host0 -> host1 after aging"
[ $(($(rx_frames 2) - before2)) = 1 ] || fail "host 2 received $(($(rx_frames 2) - before2)) frames, expected the one flooded echo request"

fwd_stop TERM
no_xdp_left || fail "an XDP program is still attached after exit"
# The forwarder's own counters agree: port 2 sent the ARP broadcast and the flooded echo only.
[ "$(port_total m2@0 tx_packets)" = 2 ] || fail "m2 sent $(port_total m2@0 tx_packets) frames, expected 2"
[ "$(port_total m2@0 rx_packets)" = 0 ] || fail "m2 received $(port_total m2@0 rx_packets) frames"
log "ok"
