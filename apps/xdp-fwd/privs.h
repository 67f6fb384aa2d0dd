/* SPDX-License-Identifier: MIT */
/* xdp-fwd privileges: what set-up needs (checked first, with a message naming what is missing)
 * and dropping every capability once set up (privs.c explains why none is needed after). */
#ifndef XDP_FWD_PRIVS_H
#define XDP_FWD_PRIVS_H

#include <stdbool.h>
#include "fwd.h"

/* 0 when the process can set cfg up; else prints which capabilities are missing, -EPERM. */
int fwd_privs_check(const struct fwd_config *cfg);
/* Drops every capability (effective, permitted, inheritable, bounding, ambient) and sets
 * no_new_privs. With keep_reopen, the capabilities that opening a port needs (those of
 * fwd_privs_check the process holds) stay in the permitted set only, not effective, for
 * fwd_privs_raise() when an interface comes back or a port is reopened. 0 or negative errno. */
int fwd_privs_drop(bool keep_reopen);
/* Makes the kept capabilities effective (on) or not (off). 0 or negative errno. */
int fwd_privs_raise(bool on);
/* The kept capabilities, comma-separated, for the log ("" when none). */
const char *fwd_privs_kept(void);
/* No capability left in any of the process's sets. */
bool fwd_privs_none(void);

#endif
