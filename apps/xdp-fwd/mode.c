/* SPDX-License-Identifier: MIT */
/* The table of xdp-fwd's modes, from FWD_MODES (fwd.h). */
#include "mode.h"

const struct fwd_mode_ops *fwd_mode_of(enum fwd_mode mode)
{
#define FWD_MODE_ENTRY(id, name, ...) [FWD_MODE_##id] = &fwd_mode_##name,
	static const struct fwd_mode_ops *const modes[FWD_MODE_COUNT] = { FWD_MODES(FWD_MODE_ENTRY) };
#undef FWD_MODE_ENTRY

	return (size_t)mode < FWD_MODE_COUNT ? modes[mode] : NULL;
}
