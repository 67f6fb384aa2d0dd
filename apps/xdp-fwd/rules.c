/* SPDX-License-Identifier: MIT */
/* xdp-fwd: checks of the --rule set against what forwarding needs. */
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "fwd.h"

#define ETH_P_ARP_ 0x0806

static bool broadcast_mac(const uint8_t *m)
{
	for (int i = 0; i < 6; i++)
		if (m[i] != 0xff)
			return false;
	return true;
}

/* Whether some ARP request (ethertype 0x0806, broadcast destination) can match r. */
static bool may_match_arp(const struct umem_steer_match *m)
{
	if (m->fields & (UMEM_STEER_M_L4PROTO | UMEM_STEER_M_SPORT | UMEM_STEER_M_DPORT))
		return false;
	if ((m->fields & UMEM_STEER_M_ETHERTYPE) && m->ethertype != ETH_P_ARP_)
		return false;
	return !(m->fields & UMEM_STEER_M_DMAC) || broadcast_mac(m->dmac);
}

int fwd_rule_passing_arp(const struct fwd_config *cfg)
{
	/* In the program's order: by priority, equal priorities as given. The first rule that
	 * takes every ARP request decides; narrower ones (a queue, a VLAN) take some before it. */
	bool done[FWD_MAX_RULES] = { false };

	for (uint32_t n = 0; n < cfg->nr_rules; n++) {
		uint32_t best = UINT32_MAX;

		for (uint32_t i = 0; i < cfg->nr_rules; i++)
			if (!done[i] && (best == UINT32_MAX || cfg->rules[i].prio < cfg->rules[best].prio))
				best = i;
		done[best] = true;
		const struct umem_steer_rule *r = &cfg->rules[best];

		if (!may_match_arp(&r->match))
			continue;
		if (r->action.type == UMEM_STEER_A_PASS)
			return (int)best;
		if (!(r->match.fields & (UMEM_STEER_M_QUEUE | UMEM_STEER_M_VLAN)))
			return -1;
	}
	return -1;
}

static int if_has_ipv4(const char *ifname)
{
	struct ifaddrs *list, *a;
	int found = 0;

	if (getifaddrs(&list))
		return -1;
	for (a = list; a && !found; a = a->ifa_next)
		found = a->ifa_addr && a->ifa_addr->sa_family == AF_INET && !strcmp(a->ifa_name, ifname);
	freeifaddrs(list);
	return found;
}

int (*fwd_if_has_ipv4)(const char *ifname) = if_has_ipv4;

int fwd_warn_rules(const struct fwd_config *cfg, FILE *out)
{
	int r = fwd_rule_passing_arp(cfg), warned = 0;

	if (r < 0)
		return 0;
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		const char *ifname = cfg->ports[i].ifname;
		bool seen = false;

		for (uint32_t j = 0; j < i; j++)
			seen |= !strcmp(cfg->ports[j].ifname, ifname);
		if (seen || fwd_if_has_ipv4(ifname) != 0)
			continue;
		fprintf(out, "xdp-fwd: warning: rule '%s' hands ARP arriving on %s to the kernel, which "
			     "has no IPv4 address on %s to answer with: the hosts on either side will not "
			     "resolve each other (drop the rule to forward ARP, or give %s an address)\n",
			cfg->rule_text[r], ifname, ifname, ifname);
		warned++;
	}
	return warned;
}
