/* SPDX-License-Identifier: MIT */
/* SIGHUP with --config (reload.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "reload.h"
#include "service.h"
#include "worker.h"

static struct fwd_config next; /* static: large, and one reload at a time */

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int rule_index(const struct fwd_config *cfg, const char *text)
{
	for (uint32_t r = 0; r < cfg->nr_rules; r++)
		if (!strcmp(cfg->rule_text[r], text))
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

/* The -r rules of every steering program become next's: the rules whose text is gone are
 * removed, the new ones added; the others keep their id and counters. text: next's rule texts
 * in store (copy_rule_texts), which cfg takes. */
static int apply_rules(struct fwd_ctx *ctx, struct fwd_config *cfg, const char **text, char *store)
{
	uint32_t ids[FWD_MAX_PORTS][FWD_MAX_RULES];
	int err = 0;

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];

		if (!fi->steer)
			continue;
		for (uint32_t r = 0; r < cfg->nr_rules; r++)
			if (rule_index(&next, cfg->rule_text[r]) < 0 && umem_steer__remove_rule(fi->steer, fi->rule_id[r], NULL))
				fprintf(stderr, "xdp-fwd: reload: %s: cannot remove rule '%s'\n", fi->name, cfg->rule_text[r]);
		for (uint32_t r = 0; r < next.nr_rules; r++) {
			int old = rule_index(cfg, next.rule_text[r]);
			struct umem_steer_rule rule = next.rules[r];

			if (old >= 0) {
				ids[f][r] = fi->rule_id[old];
				continue;
			}
			err = umem_steer__add_rule(fi->steer, &rule);
			if (err) {
				fprintf(stderr, "xdp-fwd: reload: %s: rule '%s': %s\n", fi->name, next.rule_text[r],
					strerror(-err));
				ids[f][r] = UINT32_MAX;
				continue;
			}
			ids[f][r] = rule.id;
		}
	}
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].steer)
			memcpy(ctx->ifaces[f].rule_id, ids[f], sizeof(ids[f][0]) * next.nr_rules);
	/* --offload-after's workers match frames against cfg->rules (offload.c): parked while the
	 * list changes under them. */
	bool parked = ctx->off && fwd_workers_park(ctx);

	if (!ctx->off || parked) {
		memcpy(cfg->rules, next.rules, sizeof(next.rules[0]) * next.nr_rules);
		memcpy(cfg->rule_text, text, sizeof(text[0]) * next.nr_rules);
		cfg->nr_rules = next.nr_rules;
		free(cfg->rule_store);
		cfg->rule_store = store;
		store = NULL;
	}
	if (parked)
		fwd_workers_unpark(ctx);
	free(store);
	/* The stats' rule names point into the texts just replaced: read again at the next sample. */
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		ctx->ifaces[f].steer_view.of = NULL;
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
	bool rules = false, latency = false;
	int ret;

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
	for (size_t i = 0; i < fwd_option_count(); i++) {
		const char *name = fwd_option_name(i);

		if (next.on_cmdline[i] || same(cfg->given[i], next.given[i]))
			continue;
		if (!strcmp(name, "rule") && fwd_wants_steering(cfg)) {
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
	if (rules) {
		ret = apply_rules(ctx, cfg, text, store);
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
	if (!rules && !latency && !nfixed)
		fprintf(stderr, "xdp-fwd: reload: %s unchanged\n", cfg->config_path);
	fwd_service_status("reloaded %s%s", cfg->config_path, nfixed ? " (some options need a restart)" : "");
	fwd_config_free(&next); /* what cfg took from it is copied (given[], the rule texts) */
	return 0;
}
