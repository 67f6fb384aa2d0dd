/* SPDX-License-Identifier: MIT */
/*
 * Ports added and removed while xdp-fwd runs (xdp-fwdctl ports add/remove, a reload whose -i set
 * changed), on the main thread, through the machinery that reopens a port whose interface came
 * back (ports.h): the whole change is checked first (bad input changes nothing), then the
 * workers are parked, the port table changes, and they run on. Ports that do not change are
 * never closed: their frames wait in their rings while the workers are parked.
 *
 *  - An added port gets its worker and group as at start (fwd_port_add: its wire partner's,
 *    its queue's group, else the worker with the fewest ports), its interface's steering
 *    program (attached, with the -r rules, when it is the interface's first port), and the
 *    area's frames (sized at start: --frames makes room for ports added later).
 *  - A removed port is closed as a gone interface's is (fwd_port_close: the frames it had
 *    received and not read are counted, its TX ring drained or counted), frames still headed
 *    for it are counted as drops ("down"), its MAC table entries forgotten, and its slot kept
 *    with its counters (totals never go back; the same IFNAME@QUEUE added again takes it back).
 *    An interface left without ports loses its steering program and offloaded flows.
 */
#ifndef XDP_FWD_PORTLIVE_H
#define XDP_FWD_PORTLIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fwd.h"

struct fwd_ctx;

#define FWD_PORTS_CHECK 1u   /* check the change, change nothing */
#define FWD_PORTS_RUNTIME 2u /* the control socket's: a reload keeps these ports (fwd_port.runtime) */

/* Removes rm[0..nr_rm), then adds add[0..nr_add) (in --mode wire both lists are pairs, ends
 * 2k and 2k+1). The whole change is checked before anything changes; FWD_PORTS_CHECK stops there.
 * 0, or -errno with the reason in err (nothing changed, unless a port could not be opened: then
 * the removals stand and the additions are taken back, as err says). */
int fwd_ports_change(struct fwd_ctx *ctx, const struct fwd_port_name *rm, uint32_t nr_rm, const struct fwd_port_name *add,
		     uint32_t nr_add, uint32_t flags, char *err, size_t errlen);
/* The live port named n, or UINT32_MAX. */
uint32_t fwd_ports_find(const struct fwd_ctx *ctx, const struct fwd_port_name *n);
/* A reload's difference between the ports running and those of next (its configuration, in
 * -i order): the configuration's ports next does not name are removed (ports added at run time
 * stay), the ports it names that do not run are added (arrays of FWD_MAX_PORTS). In wire mode
 * pairs are compared whole, so a pair whose ends changed is removed and added. */
void fwd_ports_diff(const struct fwd_ctx *ctx, const struct fwd_config *next, struct fwd_port_name *rm, uint32_t *nr_rm,
		    struct fwd_port_name *add, uint32_t *nr_add);
/* After a reload applied next: the run-time ports it names are the configuration's now. */
void fwd_ports_adopt(struct fwd_ctx *ctx, const struct fwd_config *next);

#endif
