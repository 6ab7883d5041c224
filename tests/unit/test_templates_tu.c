/* Every kernel template pasted into one translation unit, the way ftaxc pastes the ones a model
 * uses into its program (ft_emit_paste: #include "x" dependencies first, each file once), then
 * compiled. Two kernels that declare one name (rnn.h and gemm.h both had FT_ACT_SIGMOID once)
 * break only the programs that use both; here any pair breaks the build of the test.
 *   C:    every templates/c header, by the C compiler generated programs are built with ($CC, cc)
 *   CUDA: every templates/cuda twin, by the host C++ compiler against tests/cuda/emu (no nvcc) */
#include <stdlib.h>

#include "emit_util.h"
#include "templates.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void) { tu_rmtree(dir); }

/* The fixed program around the kernels: it needs a model's definitions (test_program.c has it). */
static int is_program_text(const char *name) { return !strncmp(name, "program", 7); }

/* Paste every template of folder `want` (ft_template_dir) into path; returns how many. */
static int paste_all(const char *path, const char *want, const char *prologue) {
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fputs(prologue, f);
  ft_pasted done = {{0}, 0};
  ft_err e = {0};
  int n = 0;
  for (int i = 0; ft_template_nth(i); i++) {
    const char *name = ft_template_nth(i);
    if (strcmp(ft_template_dir(name), want) || is_program_text(name)) continue;
    cr_assert_eq(ft_emit_paste(f, name, &done, &e), 0, "pasting %s: %s", name, e.msg);
    n++;
  }
  cr_assert_eq(fclose(f), 0);
  return n;
}

static const char *compiler(const char *env, const char *fallback) {
  const char *cc = getenv(env);
  return cc && *cc ? cc : fallback;
}

TestSuite(templates_tu, .init = setup, .fini = teardown);

Test(templates_tu, every_c_kernel_in_one_program, .timeout = 300) {
  char *src = tu_fmt("%s/all.c", dir), *obj = tu_fmt("%s/all.o", dir), *log = NULL;
  int n = paste_all(src, "c", "#include <stdint.h>\n");
  cr_assert_geq(n, 20, "only %d C templates were found", n);
  char *cmd = tu_fmt("%s -c -O0 -fopenmp -Werror=implicit-function-declaration '%s' -o '%s'",
                     compiler("CC", "cc"), src, obj);
  char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  cr_assert_eq(tu_run(dir, &log, argv), 0, "%d C templates in one translation unit do not compile "
               "(two kernels clash on a name?):\n%s", n, log);
}

Test(templates_tu, every_cuda_twin_in_one_program, .timeout = 300) {
  char *src = tu_fmt("%s/all.cu", dir), *log = NULL;
  int n = paste_all(src, "cuda", "");
  cr_assert_geq(n, 8, "only %d CUDA templates were found", n);
  char *cmd = tu_fmt("%s -std=c++20 -fsyntax-only -w -I '%s/tests/cuda/emu' -x c++ '%s'",
                     compiler("CXX", "c++"), FTAX_SOURCE_DIR, src);
  char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  cr_assert_eq(tu_run(dir, &log, argv), 0, "%d CUDA templates in one translation unit do not compile "
               "(two twins clash on a name?):\n%s", n, log);
}
