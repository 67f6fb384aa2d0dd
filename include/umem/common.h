/* SPDX-License-Identifier: MIT */
/* libumem: shared definitions (export macro, logging, options helpers, a hash mixer). */
#ifndef UMEM_COMMON_H
#define UMEM_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef UMEM_API
#define UMEM_API __attribute__((visibility("default")))
#endif

#define UMEM_VERSION_MAJOR 0
#define UMEM_VERSION_MINOR 1
/* The SONAME is libumem.so.UMEM_SOVERSION. It changes with any change of the structs the
 * inline fast paths read (umem/area.h, umem/pool_fast.h): their layout is ABI. */
#define UMEM_SOVERSION 0

#ifndef umem_likely
#define umem_likely(x) __builtin_expect(!!(x), 1)
#define umem_unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* murmur3's 64-bit finaliser (fmix64): every input bit reaches every output bit. For hash
 * tables and for choosing among equal paths by a flow's key, where a plain multiply would leave
 * the low bits to the low bits of the key. */
static inline uint64_t umem_hash__mix64(uint64_t x);

/* Options structs carry their size first so they can grow without breaking callers
 * (libbpf's OPTS pattern): UMEM_OPTS(umem_area_opts, o, .page_size = 8192); zeroes every other
 * field. A struct from a newer caller (larger sz) is accepted when the bytes this library does
 * not know are zero, and refused with -EINVAL and a message naming the struct otherwise; sz = 0
 * is refused. Output structs (the stats) use the same macro: set .sz before the call. A plain
 * initializer, so compound literals in the arguments live as long as the struct; the structs'
 * padding is named (reserved), so the initializer zeroes it too (C11 6.7.9 leaves unnamed
 * members indeterminate), and the library checks it: a later field may take its place. */
#define UMEM_OPTS(type, name, ...) \
	struct type name = { .sz = sizeof(struct type), __VA_ARGS__ }

enum umem_print_level {
	UMEM_WARN,
	UMEM_INFO,
	UMEM_DEBUG,
};

typedef int (*umem_print_fn_t)(enum umem_print_level level, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));

/* Marks a name kept for one release after its replacement: a warning naming the new one.
 * Define UMEM_SUPPRESS_DEPRECATED before including libumem's headers to silence them while a
 * program moves over. */
#if defined(UMEM_SUPPRESS_DEPRECATED)
#define UMEM_DEPRECATED(msg)
#else
#define UMEM_DEPRECATED(msg) __attribute__((deprecated(msg)))
#endif

/* Replaces the print callback (default: WARN and INFO to stderr; DEBUG too with the
 * environment variable LIBUMEM_VERBOSE set); returns the previous one. NULL silences the
 * library. Messages start with "libumem: ". While a libumem call runs, libbpf's and libxdp's
 * messages come through it too, at UMEM_DEBUG, starting "libbpf: " / "libxdp: " (the
 * application's own libbpf_set_print / libxdp_set_print callbacks are put back on return). The library holds none of its
 * locks while it calls fn, so fn may call any area function (umem_area__free_pages,
 * umem_area__put, umem_area__put_pages) and any call on a pool the calling thread owns; it runs on
 * the thread whose call logged, inside that call. */
UMEM_API umem_print_fn_t umem_set_print(umem_print_fn_t fn);

/* ---- inline definitions ---- */

static inline uint64_t umem_hash__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

#ifdef __cplusplus
}
#endif
#endif
