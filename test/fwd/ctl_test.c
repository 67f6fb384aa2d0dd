/* SPDX-License-Identifier: MIT */
/* The control socket's request parser and default path (ctl.c): every command, and every way a
 * request is refused with a message. */
#include <errno.h>
#include <string.h>

#include "ctl.h"
#include "testutil.h"

static struct fwd_ctl_req req;
static char err[512];

static int parse(const char *s)
{
	return fwd_ctl_parse(s, strlen(s), &req, err, sizeof(err));
}

/* s is refused with a message holding needle. */
static void refused(const char *s, const char *needle)
{
	CHECK(parse(s) == -EINVAL, "'%s' was accepted", s);
	CHECK(strstr(err, needle), "'%s': message '%s' lacks '%s'", s, err, needle);
}

static void test_commands(void)
{
	static const struct {
		const char *text;
		enum fwd_ctl_cmd cmd;
	} ok[] = {
		{ "help", FWD_CTL_HELP },	   { "version", FWD_CTL_VERSION },   { "stats", FWD_CTL_STATS },
		{ "ports", FWD_CTL_PORTS },	   { "workers", FWD_CTL_WORKERS },   { "flows", FWD_CTL_FLOWS },
		{ "mac", FWD_CTL_MAC },	   { "rules", FWD_CTL_RULES_LIST },  { "rules list", FWD_CTL_RULES_LIST },
		{ "reload", FWD_CTL_RELOAD }, { " \tstats \t", FWD_CTL_STATS }, { "stats\r", FWD_CTL_STATS },
		{ "ports list", FWD_CTL_PORTS }, { "restart", FWD_CTL_RESTART },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(parse(ok[i].text) == 0, "'%s': %s", ok[i].text, err);
		CHECK_EQ(req.cmd, ok[i].cmd);
		CHECK(!req.json, "'%s' is not --json", ok[i].text);
	}
	CHECK_EQ(parse("--json stats"), 0);
	CHECK(req.json && req.cmd == FWD_CTL_STATS, "--json stats");
	CHECK_EQ(parse("latency low"), 0);
	CHECK(req.cmd == FWD_CTL_LATENCY && req.latency == FWD_LATENCY_LOW, "latency low");
	CHECK_EQ(parse("latency saver"), 0);
	CHECK_EQ(req.latency, FWD_LATENCY_SAVER);
	CHECK_EQ(parse("rules remove 4294967295"), 0);
	CHECK(req.cmd == FWD_CTL_RULES_REMOVE && req.id == UINT32_MAX, "remove id");
	CHECK_EQ(parse("handover 1"), 0);
	CHECK(req.cmd == FWD_CTL_HANDOVER && req.version == 1, "handover 1");
	/* A rule's words, however spaced, reach the rule parser one space apart. */
	CHECK_EQ(parse("rules add  udp\tdport 53   ->  drop"), 0);
	CHECK_EQ(req.cmd, FWD_CTL_RULES_ADD);
	CHECK(!strcmp(req.text, "udp dport 53 -> drop"), "text '%s'", req.text);
	CHECK_EQ(req.rule.action.type, UMEM_STEER_A_DROP);
	CHECK(req.rule.match.fields & UMEM_STEER_M_DPORT, "dport matched");
}

static void test_ports(void)
{
	CHECK_EQ(parse("ports add eth1"), 0);
	CHECK(req.cmd == FWD_CTL_PORTS_ADD && req.nr_port == 1, "ports add eth1");
	CHECK(!strcmp(req.port[0].ifname, "eth1") && req.port[0].queue == 0, "%s@%u", req.port[0].ifname, req.port[0].queue);
	CHECK_EQ(parse("--json ports remove eth1@3 fifteen-chars-x@65535"), 0);
	CHECK(req.json && req.cmd == FWD_CTL_PORTS_REMOVE && req.nr_port == 2, "ports remove, two");
	CHECK(!strcmp(req.port[0].ifname, "eth1") && req.port[0].queue == 3, "%s@%u", req.port[0].ifname, req.port[0].queue);
	CHECK(!strcmp(req.port[1].ifname, "fifteen-chars-x") && req.port[1].queue == 65535, "%s@%u", req.port[1].ifname,
	      req.port[1].queue);
	CHECK_EQ(parse("ports add eth1@0 eth2@00"), 0);
	CHECK_EQ(req.port[1].queue, 0);
	refused("ports drop eth1", "is not list, add or remove");
	refused("ports list eth1", "takes no argument");
	refused("ports add", "give one port");
	refused("ports remove a b c", "give one port");
	refused("ports add sixteen-chars-xy", "is not an interface name");
	refused("ports add @1", "is not an interface name");
	refused("ports add a/b", "is not an interface name");
	refused("ports add a:1", "is not an interface name");
	refused("ports add ..", "is not an interface name");
	refused("ports add eth1@", "give the queue as a number");
	refused("ports add eth1@1x", "give the queue as a number");
	refused("ports add eth1@-1", "give the queue as a number");
	refused("ports add eth1@123456", "give the queue as a number");
	refused("ports add eth1@1@2", "give the queue as a number");
	refused("ports remove eth1 eth1@0", "eth1@0 is named twice");
}

static void test_refused(void)
{
	char big[FWD_CTL_MAX_LINE + 2];

	refused("", "empty request");
	refused("   ", "empty request");
	refused("--json", "empty request");
	refused("statz", "unknown command 'statz'");
	refused("stats now", "stats takes no argument");
	refused("help me", "help takes no argument");
	refused("restart now", "restart takes no argument");
	refused("rules drop", "is not list, add or remove");
	refused("rules list all", "takes no argument");
	refused("rules add", "give a rule");
	refused("rules add udp dport -> drop", "is not a steering rule");
	refused("rules remove", "give one rule id");
	refused("rules remove 1 2", "give one rule id");
	refused("rules remove x1", "is not a rule id");
	refused("rules remove -1", "is not a rule id");
	refused("rules remove 4294967296", "is not a rule id");
	refused("rules remove 12345678901234567890", "is not a rule id");
	refused("handover", "give the protocol version");
	refused("handover 0", "give the protocol version");
	refused("handover 12", "give the protocol version");
	refused("handover 1 2", "give the protocol version");
	refused("latency", "give one level");
	refused("latency fast", "'fast' is not a level");
	refused("stats\033[2J", "0x1b");
	refused("st\x80", "0x80");
	CHECK(fwd_ctl_parse("stats\0x", 7, &req, err, sizeof(err)) == -EINVAL && strstr(err, "0x00"), "NUL: %s", err);
	/* The limit: 4096 bytes are a request, 4097 are not. */
	memset(big, ' ', sizeof(big));
	memcpy(big, "help", 4);
	CHECK(fwd_ctl_parse(big, FWD_CTL_MAX_LINE, &req, err, sizeof(err)) == 0, "4096 bytes: %s", err);
	CHECK(fwd_ctl_parse(big, FWD_CTL_MAX_LINE + 1, &req, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "longer than 4096 bytes"), "4097 bytes: %s", err);
	/* Too many words, each short. */
	for (size_t i = 0; i < FWD_CTL_MAX_LINE; i += 2)
		big[i] = 'a', big[i + 1] = ' ';
	CHECK(fwd_ctl_parse(big, FWD_CTL_MAX_LINE, &req, err, sizeof(err)) == -EINVAL && strstr(err, "words"), "%s", err);
	/* A message longer than the caller's buffer is cut, and terminated. */
	memset(err, 'x', sizeof(err));
	CHECK(fwd_ctl_parse("statz", 5, &req, err, 8) == -EINVAL && strlen(err) == 7, "short buffer: '%s'", err);
}

static void test_default_path(void)
{
	static struct fwd_config cfg;
	char path[FWD_CTL_PATH_MAX];

	fwd_config_defaults(&cfg);
	snprintf(cfg.specs[0].ifname, sizeof(cfg.specs[0].ifname), "eth1");
	cfg.nr_specs = 1;
	CHECK_EQ(fwd_ctl_default_path(&cfg, 0, path, sizeof(path)), 0);
	CHECK(!strcmp(path, "/run/xdp-fwd/eth1.sock"), "%s", path);
	CHECK_EQ(fwd_ctl_default_path(&cfg, 4026532001ull, path, sizeof(path)), 0);
	CHECK(!strcmp(path, "/run/xdp-fwd/eth1@net4026532001.sock"), "%s", path);
	cfg.config_path = "/etc/xdp-fwd/edge.conf"; /* the systemd instance's name wins */
	CHECK_EQ(fwd_ctl_default_path(&cfg, 0, path, sizeof(path)), 0);
	CHECK(!strcmp(path, "/run/xdp-fwd/edge.sock"), "%s", path);
	cfg.config_path = "lab";
	CHECK_EQ(fwd_ctl_default_path(&cfg, 0, path, sizeof(path)), 0);
	CHECK(!strcmp(path, "/run/xdp-fwd/lab.sock"), "%s", path);
	cfg.config_path = "/etc/xdp-fwd/.conf";
	CHECK_EQ(fwd_ctl_default_path(&cfg, 0, path, sizeof(path)), -1);
	cfg.config_path = "/etc/xdp-fwd/a-name-that-makes-the-socket-path-longer-than-the-108-bytes-a-unix-socket-address-holds-at-all.conf";
	CHECK_EQ(fwd_ctl_default_path(&cfg, 0, path, sizeof(path)), -1);
}

int main(void)
{
	umem_set_print(NULL); /* the rule parser names the bad token on stderr: not checked here */
	test_commands();
	test_ports();
	test_refused();
	test_default_path();
	return 0;
}
