/* SPDX-License-Identifier: MIT */
#ifndef UMEM_STEER_TOOL_FLOWS_H
#define UMEM_STEER_TOOL_FLOWS_H

#include <umem/steer.h>

/* umem-steer flows IFACE [expire SECS | clear]: 0 or negative errno. */
int steer_cmd_flows(struct umem_steer *s, char **argv, int argc);

#endif
