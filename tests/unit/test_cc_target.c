/* compiler/cc_target.c: the C compiler's target (native or cross) and ELF section sizes, which
 * ftaxc --report prints as code and static data. */
#include <criterion/criterion.h>
#include <string.h>

#include "cc_target.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
TestSuite(cc_target, .init = setup);

Test(cc_target, native_compiler_keeps_march_native) {
  ft_cc_target t;
  ft_err e = {0};
  cr_assert_eq(ft_cc_probe("cc", &t, &e), 0, "%s", e.msg);
  cr_assert(strchr(t.triple, '-'), "cc -dumpmachine: '%s'", t.triple);
  cr_assert_not(t.cross, "cc names this machine's architecture: %s", t.triple);
  cr_assert(strstr(ft_cc_default_flags(&t), "-march=native"));
  ft_cc_target x = {"aarch64-linux-gnu", 1};
  cr_assert_null(strstr(ft_cc_default_flags(&x), "-march=native"), "no -march=native for a cross compiler");
  cr_assert(strstr(ft_cc_default_flags(&x), "-pthread"), "the thread pool stays");
}

Test(cc_target, missing_compiler_is_an_io_failure_by_name) {
  ft_cc_target t;
  ft_err e = {0};
  cr_assert_eq(ft_cc_probe("no-such-cc-ftax", &t, &e), FT_EIO);
  cr_assert(strstr(e.msg, "'no-such-cc-ftax'"), "%s", e.msg);
}

/* An object of known contents: each size is at least what the source puts there. */
Test(cc_target, elf_sizes_of_an_object) {
  char *src = tu_fmt("%s/k.c", dir), *obj = tu_fmt("%s/k.o", dir), *log;
  const char *text = "const char ro[3000] = {1};\n"
                     "char zeros[5000];\n"
                     "int init[300] = {1};\n"
                     "int f(int x) { return x * 3 + zeros[x] + ro[x]; }\n";
  tb_write_bytes(src, text, strlen(text));
  char *argv[] = {"/usr/bin/cc", "-O1", "-c", "-o", obj, src, NULL};
  cr_assert_eq(tu_run(NULL, &log, argv), 0, "%s", log);
  ft_elf_sizes s;
  cr_assert_eq(ft_elf_sizes_read(obj, &s), 0);
  cr_assert(s.code > 0 && s.code < 1000, "code %llu", (unsigned long long)s.code);
  cr_assert(s.rodata >= 3000 && s.rodata < 4000, "rodata %llu", (unsigned long long)s.rodata);
  cr_assert(s.bss >= 5000 && s.bss < 6000, "bss %llu", (unsigned long long)s.bss);
  cr_assert(s.data >= 1200 && s.data < 2000, "data %llu", (unsigned long long)s.data);
  cr_assert_eq(ft_elf_sizes_read(src, &s), -1, "a C file is not ELF");
  cr_assert_eq(ft_elf_sizes_read(tu_fmt("%s/none", dir), &s), -1);
}
