/* What the C compiler builds for, and how big what it built is (ftaxc --cc, --report).
 *
 * A cross compiler is one whose target architecture (the first field of `CC -dumpmachine`, e.g.
 * aarch64 of aarch64-linux-gnu) is not this machine's (uname -m). Its default flags leave out
 * -march=native, which would describe this machine, not the target. */
#ifndef FT_CC_TARGET_H
#define FT_CC_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef struct ft_cc_target {
  char triple[128]; /* `CC -dumpmachine`; empty when the compiler does not answer it */
  int cross;        /* the triple names another architecture than this machine's */
} ft_cc_target;

/* Runs `cc -dumpmachine`. FT_EIO when cc cannot be run at all (not found, not executable);
 * a compiler that runs but does not answer counts as a native one. */
int ft_cc_probe(const char *cc, ft_cc_target *t, ft_err *e);

/* The instruction set the compiler targets with these flags (space-separated), as
 * templates/c/isa.h names it ("avx512", "avx2", "neon", "generic"): the compiler preprocesses
 * that header, so the planner's target and the kernels' #if are the same test by construction.
 * 0 with the name in isa; -1 when the compiler cannot preprocess it (isa untouched). */
int ft_cc_isa(const char *cc, const char *flags, char *isa, size_t n);

/* Is name one of isa.h's instruction sets? */
int ft_isa_known(const char *name);

/* ftaxc's flags when --cflags is not given: -O3 -march=native -pthread natively, -O3 -pthread
 * for a cross compiler (the target's baseline ISA: NEON on aarch64, rv64gc on riscv64). */
const char *ft_cc_default_flags(const ft_cc_target *t);

/* Section sizes of an ELF file (object or executable, 32 or 64 bit, either byte order), by the
 * section flags: code (allocated, executable), rodata (allocated, read-only data), data
 * (allocated, writable, with contents) and bss (allocated, writable, no contents). */
typedef struct ft_elf_sizes {
  uint64_t code, rodata, data, bss;
} ft_elf_sizes;

/* 0, or -1 when path is not a readable ELF file. */
int ft_elf_sizes_read(const char *path, ft_elf_sizes *s);

#endif
