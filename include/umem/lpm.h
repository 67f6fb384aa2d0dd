/* TEMPORARY copy of the contract (router-api.md) until branch lpm is merged. */
#ifndef UMEM_LPM_H
#define UMEM_LPM_H
#include <stddef.h>
#include <stdint.h>
#define UMEM_LPM_NH_MAX ((1u << 24) - 1)
#define UMEM_LPM_MISS UINT32_MAX
struct umem_lpm4_opts { size_t sz; uint32_t max_prefixes; uint32_t tbl8_groups; };
struct umem_lpm4;
struct umem_lpm4 *umem_lpm4__create(const struct umem_lpm4_opts *opts);
void umem_lpm4__destroy(struct umem_lpm4 *lpm);
int umem_lpm4__add(struct umem_lpm4 *lpm, uint32_t addr, uint8_t depth, uint32_t next_hop);
int umem_lpm4__delete(struct umem_lpm4 *lpm, uint32_t addr, uint8_t depth);
int umem_lpm4__lookup(const struct umem_lpm4 *lpm, uint32_t addr, uint32_t *next_hop);
size_t umem_lpm4__memory(const struct umem_lpm4 *lpm);
void umem_lpm4__reclaim(struct umem_lpm4 *lpm);
struct umem_lpm6_opts { size_t sz; uint32_t max_prefixes; uint32_t groups; };
struct umem_lpm6;
struct umem_lpm6 *umem_lpm6__create(const struct umem_lpm6_opts *opts);
void umem_lpm6__destroy(struct umem_lpm6 *lpm);
int umem_lpm6__add(struct umem_lpm6 *lpm, const uint8_t addr[16], uint8_t depth, uint32_t next_hop);
int umem_lpm6__delete(struct umem_lpm6 *lpm, const uint8_t addr[16], uint8_t depth);
int umem_lpm6__lookup(const struct umem_lpm6 *lpm, const uint8_t addr[16], uint32_t *next_hop);
size_t umem_lpm6__memory(const struct umem_lpm6 *lpm);
void umem_lpm6__reclaim(struct umem_lpm6 *lpm);
#endif
