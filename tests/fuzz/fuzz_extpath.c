/* Fuzz target: external data locations. A folder tree is made once:
 *
 *   ROOT/model/data.bin            a data file next to the model
 *   ROOT/model/sub/inner.bin       one in a subfolder
 *   ROOT/model/link_in -> data.bin        a link that stays inside
 *   ROOT/model/link_out -> ../outside.bin a link to a file outside
 *   ROOT/model/link_dir -> ../outdir      a link to a folder outside
 *   ROOT/model/loop -> loop               a link to itself
 *   ROOT/outside.bin, ROOT/outdir/x.bin   files outside the model's folder
 *
 * The input bytes (up to the first NUL) are the `location` of a tensor in ROOT/model;
 * whatever ft_external_path accepts must, with every link resolved, be a regular file inside
 * ROOT/model, and be what it returned. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[PATH_MAX], model[PATH_MAX], model_real[PATH_MAX];

static void put(const char *rel, const char *text) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  FILE *f = fopen(p, "w");
  if (!f) { perror(p); abort(); }
  fputs(text, f);
  fclose(f);
}

static void link_at(const char *target, const char *rel) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  if (symlink(target, p)) { perror(p); abort(); }
}

static void dir_at(const char *rel) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", root, rel);
  if (mkdir(p, 0700)) { perror(p); abort(); }
}

static void cleanup(void) {
  static const char *rels[] = {"model/loop", "model/link_dir", "model/link_out", "model/link_in",
                               "model/sub/inner.bin", "model/data.bin", "outdir/x.bin", "outside.bin"};
  static const char *dirs[] = {"model/sub", "model", "outdir", ""};
  char p[PATH_MAX];
  for (size_t i = 0; i < sizeof rels / sizeof *rels; i++) { snprintf(p, sizeof p, "%s/%s", root, rels[i]); unlink(p); }
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) { snprintf(p, sizeof p, "%s/%s", root, dirs[i]); rmdir(p); }
}

static void setup(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/ftax-fuzz-extpath-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(root)) { perror(root); abort(); }
  dir_at("model");
  dir_at("model/sub");
  dir_at("outdir");
  put("model/data.bin", "0123456789abcdef");
  put("model/sub/inner.bin", "0123456789abcdef");
  put("outside.bin", "secret");
  put("outdir/x.bin", "secret");
  link_at("data.bin", "model/link_in");
  link_at("../outside.bin", "model/link_out");
  link_at("../outdir", "model/link_dir");
  link_at("loop", "model/loop");
  snprintf(model, sizeof model, "%s/model", root);
  if (!realpath(model, model_real)) { perror(model); abort(); }
  atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!root[0]) setup();
  char loc[4096];
  size_t n = size < sizeof loc - 1 ? size : sizeof loc - 1;
  memcpy(loc, data, n);
  loc[n] = 0;
  char out[PATH_MAX];
  ft_err e = {0};
  if (ft_external_path(model, loc, out, sizeof out, &e)) {
    if (!e.msg[0]) { fprintf(stderr, "fuzz_extpath: refused '%s' without a message\n", loc); __builtin_trap(); }
    return 0;
  }
  char real[PATH_MAX];
  struct stat st;
  size_t k = strlen(model_real);
  if (!realpath(out, real) || strcmp(real, out)) {
    fprintf(stderr, "fuzz_extpath: '%s' resolved to '%s', which is not its real path\n", loc, out);
    __builtin_trap();
  }
  if (strncmp(real, model_real, k) || real[k] != '/') {
    fprintf(stderr, "fuzz_extpath: '%s' leads out of the model's folder, to '%s'\n", loc, real);
    __builtin_trap();
  }
  if (stat(real, &st) || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "fuzz_extpath: '%s' is accepted but '%s' is not a regular file\n", loc, real);
    __builtin_trap();
  }
  return 0;
}
