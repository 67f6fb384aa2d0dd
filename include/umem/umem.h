/* SPDX-License-Identifier: MIT */
/* libumem: everything in one include. */
#ifndef UMEM_UMEM_H
#define UMEM_UMEM_H

#include <umem/common.h>
#include <umem/area.h>
#include <umem/pool.h>
#include <umem/classes.h>
#include <umem/steer.h>
#include <umem/port.h>
#include <umem/idle.h>
#include <umem/csum.h>
#include <umem/lpm.h>

#endif
