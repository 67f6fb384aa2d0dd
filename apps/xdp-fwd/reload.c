/* SPDX-License-Identifier: MIT */
/* SIGHUP with --config (reload.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "mode.h"
#include "portlive.h"
#include "reload.h"
#include "service.h"
#include "worker.h"

static struct fwd_config next; /* static: large, and one reload at a time */
/* The ports a reload removes and adds (portlive.h); static: one reload at a time. */
static struct fwd_port_name ports_rm[FWD_MAX_PORTS], ports_add[FWD_MAX_PORTS];
static uint32_t nr_ports_rm, nr_ports_add;

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int rule_index(const char *const *texts, uint32_t n, const char *text)
{
	for (uint32_t r = 0; r < n; r++)
		if (!strcmp(texts[r], text))
			return (int)r;
	return -1;
}

/* next's rule texts, copied into one block (NULL: out of memory): next's file text, which they
 * point into, is freed after the reload, so a reload keeps only the texts of the rules it
 * applied (the running configuration then owns the block, cfg->rule_store). */
static char *copy_rule_texts(const char **text)
{
	size_t len = 1, n;
	char *block, *p;

	for (uint32_t r = 0; r < next.nr_rules; r++)
		len += strlen(next.rule_text[r]) + 1;
	block = p = malloc(len);
	for (uint32_t r = 0; block && r < next.nr_rules; r++, p += n) {
		n = strlen(next.rule_text[r]) + 1;
		memcpy(p, next.rule_text[r], n);
		text[r] = p;
	}
	return block;
}

int fwd_rules_replace(struct fwd_ctx *ctx, const struct umem_steer_rule *rules, const char *const *texts, uint32_t n,
		      bool *applied)
{
	struct fwd_config *cfg = ctx->cfg;
	uint32_t ids[FWD_MAX_PORTS][FWD_MAX_RULES];
	int err = 0;

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];

		if (!fi->steer)
			continue;
		for (uint32_t r = 0; r < cfg->nr_rules; r++)
			if (rule_index(texts, n, cfg->rule_text[r]) < 0 && umem_steer__remove_rule(fi->steer, fi->rule_id[r], NULL))
				fprintf(stderr, "xdp-fwd: %s: cannot remove rule '%s'\n", fi->name, cfg->rule_text[r]);
		for (uint32_t r = 0; r < n; r++) {
			int old = rule_index(cfg->rule_text, cfg->nr_rules, texts[r]);
			struct umem_steer_rule rule = rules[r];

			if (old >= 0) {
				ids[f][r] = fi->rule_id[old];
				continue;
			}
			err = umem_steer__add_rule(fi->steer, &rule);
			if (err) {
				fprintf(stderr, "xdp-fwd: %s: rule '%s': %s\n", fi->name, texts[r], strerror(-err));
				ids[f][r] = UINT32_MAX;
				continue;
			}
			ids[f][r] = rule.id;
		}
	}
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].steer)
			memcpy(ctx->ifaces[f].rule_id, ids[f], sizeof(ids[f][0]) * n);
	/* --offload-after's workers match frames against cfg->rules (offload.c): parked while the
	 * list changes under them. */
	bool parked = ctx->off && fwd_workers_park(ctx);

	if (!ctx->off || parked) {
		memmove(cfg->rules, rules, sizeof(rules[0]) * n);
		memmove(cfg->rule_text, texts, sizeof(texts[0]) * n);
		cfg->nr_rules = n;
	}
	if (applied)
		*applied = !ctx->off || parked;
	if (parked)
		fwd_workers_unpark(ctx);
	/* The stats' rule names point into the texts just replaced: read again at the next sample. */
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		ctx->ifaces[f].steer_view.of = NULL;
	return err;
}

/* A reload's rules: next's (their texts copied into store) and those the mode adds of its own
 * (l3: the pass rules of its addresses), which a reload keeps. cfg takes store once its rules
 * point into it; the block it had goes. */
static int reload_rules(struct fwd_ctx *ctx, const char **text, char *store)
{
	static struct umem_steer_rule rules[FWD_MAX_RULES]; /* static: large; main thread only */
	static const char *texts[FWD_MAX_RULES];
	struct fwd_config *cfg = ctx->cfg;
	uint32_t n = next.nr_rules;
	bool applied = false;
	int err;

	memcpy(rules, next.rules, sizeof(rules[0]) * n);
	memcpy(texts, text, sizeof(texts[0]) * n);
	if (ctx->mode && ctx->mode->own_rules)
		n = ctx->mode->own_rules(ctx, rules, texts, n, FWD_MAX_RULES);
	err = fwd_rules_replace(ctx, rules, texts, n, &applied);
	if (applied) {
		free(cfg->rule_store);
		cfg->rule_store = store;
	} else {
		free(store); /* the workers could not be parked: cfg kept its rules and their texts */
	}
	return err;
}

void fwd_latency_apply(struct fwd_ctx *ctx, enum fwd_latency level, bool given)
{
	ctx->cfg->latency = level;
	ctx->cfg->latency_given = given;
	/* The workers take the level's idle policy at their next idle turn (worker.c). */
	atomic_fetch_add(&ctx->latency_gen, 1);
}

int fwd_reload(struct fwd_ctx *ctx, int argc, char **argv, char *why, size_t whylen)
{
	struct fwd_config *cfg = ctx->cfg;
	const char *text[FWD_MAX_RULES];
	char err[512], fixed[1024] = "", *store;
	size_t nfixed = 0;
	bool rules = false, latency = false, ports = false;
	size_t iface_opt = 0;
	int ret, ports_ret = 0;

	fwd_config_free(&next);
	ret = fwd_parse_args(&next, argc, argv, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "xdp-fwd: reload: %s; nothing changed\n", ret < 0 ? err : "no options");
		fwd_service_status("reload failed: %s", ret < 0 ? err : "no options");
		snprintf(why, whylen, "%s", ret < 0 ? err : "no options");
		fwd_config_free(&next);
		return -1;
	}
	store = copy_rule_texts(text);
	if (!store) { /* before anything changes */
		fprintf(stderr, "xdp-fwd: reload: out of memory; nothing changed\n");
		snprintf(why, whylen, "out of memory");
		fwd_config_free(&next);
		return -1;
	}
	/* The ports first, checked whole: a port that cannot be added or removed fails the reload
	 * before anything changed, as a file error does. */
	for (size_t i = 0; i < fwd_option_count(); i++)
		ports |= !strcmp(fwd_option_name(i), "interface") && !next.on_cmdline[i] && !same(cfg->given[i], next.given[i]);
	if (ports) {
		fwd_ports_diff(ctx, &next, ports_rm, &nr_ports_rm, ports_add, &nr_ports_add);
		if (fwd_ports_change(ctx, ports_rm, nr_ports_rm, ports_add, nr_ports_add, FWD_PORTS_CHECK, err, sizeof(err))) {
			fprintf(stderr, "xdp-fwd: reload: %s: interface: %s; nothing changed\n", cfg->config_path, err);
			fwd_service_status("reload failed: interface: %s", err);
			snprintf(why, whylen, "%s: interface: %s", cfg->config_path, err);
			free(store);
			fwd_config_free(&next);
			return -1;
		}
	}
	for (size_t i = 0; i < fwd_option_count(); i++) {
		const char *name = fwd_option_name(i);

		if (next.on_cmdline[i] || same(cfg->given[i], next.given[i]))
			continue;
		if (!strcmp(name, "interface")) {
			/* Applied below (portlive.c), and taken as the running value only once the
			 * ports changed: a change that failed is tried again by the next reload. */
			iface_opt = i;
			continue;
		} else if (!strcmp(name, "rule") && fwd_wants_steering(cfg)) {
			rules = true;
		} else if (!strcmp(name, "latency") && next.cpu_latency == cfg->cpu_latency &&
			   next.cpu_latency_usecs == cfg->cpu_latency_usecs) {
			latency = true; /* the CPU latency request is held from the start: same one */
		} else {
			nfixed += (size_t)snprintf(fixed + nfixed, sizeof(fixed) - nfixed, "%s--%s", nfixed ? ", " : "", name);
			if (nfixed >= sizeof(fixed))
				nfixed = sizeof(fixed) - 1;
			continue;
		}
		/* Applied: its values are the running ones now (a later reload compares with them). */
		free(cfg->given[i]);
		cfg->given[i] = next.given[i];
		next.given[i] = NULL;
	}
	/* Before the rules: an interface added gets its program, which the rules then edit. */
	if (ports) {
		ports_ret = fwd_ports_change(ctx, ports_rm, nr_ports_rm, ports_add, nr_ports_add, 0, err, sizeof(err));
		if (ports_ret) {
			fprintf(stderr, "xdp-fwd: reload: ports: %s\n", err);
			snprintf(why, whylen, "%s: interface: %s (the file's other changes are applied; a reload "
				 "tries the ports again)", cfg->config_path, err);
		} else {
			fwd_ports_adopt(ctx, &next);
			free(cfg->given[iface_opt]);
			cfg->given[iface_opt] = next.given[iface_opt];
			next.given[iface_opt] = NULL;
			fprintf(stderr, "xdp-fwd: reload: ports: %u removed, %u added\n", nr_ports_rm, nr_ports_add);
		}
	}
	if (rules) {
		ret = reload_rules(ctx, text, store);
		store = NULL;
		fprintf(stderr, "xdp-fwd: reload: rules now %u%s\n", cfg->nr_rules, ret ? " (some failed, above)" : "");
	} else {
		free(store);
	}
	if (latency) {
		fwd_latency_apply(ctx, next.latency, next.latency_given);
		fprintf(stderr, "xdp-fwd: reload: latency %s\n", fwd_latency_names[cfg->latency]);
	}
	if (nfixed)
		fprintf(stderr, "xdp-fwd: reload: cannot change while running: %s (left as they were; a restart applies them)\n",
			fixed);
	if (!rules && !latency && !nfixed && !ports)
		fprintf(stderr, "xdp-fwd: reload: %s unchanged\n", cfg->config_path);
	if (ports_ret)
		fwd_service_status("reload failed: interface: %s", err);
	else
		fwd_service_status("reloaded %s%s", cfg->config_path, nfixed ? " (some options need a restart)" : "");
	fwd_config_free(&next); /* what cfg took from it is copied (given[], the rule texts) */
	return ports_ret ? 1 : 0;
}
