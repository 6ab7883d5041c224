/* The C compiler's target (cross or native) and ELF section sizes: see cc_target.h. */
#include "cc_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "templates.h"

/* The compiler's stdout into buf (NUL-terminated, trailing newline dropped); its exit status,
 * 127 when it could not be started. */
static int run_capture(const char *cc, const char *arg, char *buf, size_t n) {
  int fd[2];
  buf[0] = 0;
  if (pipe(fd)) return 127;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    FILE *null = freopen("/dev/null", "w", stderr);
    (void)null;
    execlp(cc, cc, arg, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t k = 0;
  ssize_t r;
  char chunk[256];
  while (pid > 0 && (r = read(fd[0], chunk, sizeof chunk)) > 0) /* all of it: a full pipe would block the child */
    for (ssize_t i = 0; i < r; i++)
      if (k < n - 1) buf[k++] = chunk[i];
  close(fd[0]);
  buf[k] = 0;
  while (k && (buf[k - 1] == '\n' || buf[k - 1] == '\r')) buf[--k] = 0;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return 127;
  return WEXITSTATUS(status);
}

int ft_cc_probe(const char *cc, ft_cc_target *t, ft_err *e) {
  memset(t, 0, sizeof *t);
  int rc = run_capture(cc, "-dumpmachine", t->triple, sizeof t->triple);
  if (rc == 127)
    return ft_fail(e, FT_EIO, "cannot run the C compiler '%s' (not found or not executable); name one with --cc or $CC "
                              "(cross compilers: scripts/install-deps.sh), or use --emit-only", cc);
  if (rc != 0 || !strchr(t->triple, '-')) { t->triple[0] = 0; return 0; }
  struct utsname u;
  size_t arch = strcspn(t->triple, "-");
  if (uname(&u) == 0) t->cross = strlen(u.machine) != arch || strncmp(u.machine, t->triple, arch) != 0;
  return 0;
}

/* argv's stdout into buf as run_capture does, with in written to its stdin. */
static int run_filter(char *const *argv, const char *in, char *buf, size_t n) {
  int to[2], from[2];
  buf[0] = 0;
  if (pipe(to)) return 127;
  if (pipe(from)) { close(to[0]); close(to[1]); return 127; }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[0]); close(to[1]); close(from[0]); close(from[1]);
    FILE *null = freopen("/dev/null", "w", stderr);
    (void)null;
    execvp(argv[0], argv);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  /* the header is a few KiB, less than a pipe holds: written whole before reading */
  size_t len = strlen(in);
  for (size_t off = 0; pid > 0 && off < len;) {
    ssize_t w = write(to[1], in + off, len - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(to[1]);
  size_t k = 0;
  ssize_t r;
  char chunk[256];
  while (pid > 0 && (r = read(from[0], chunk, sizeof chunk)) > 0)
    for (ssize_t i = 0; i < r; i++)
      if (k < n - 1) buf[k++] = chunk[i];
  close(from[0]);
  buf[k] = 0;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return 127;
  return WEXITSTATUS(status);
}

int ft_isa_known(const char *name) {
  static const char *const names[] = {"avx512", "avx2", "neon", "generic"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(name, names[i])) return 1;
  return 0;
}

int ft_cc_isa(const char *cc, const char *flags, char *isa, size_t n) {
  const char *hdr = ft_template_text("isa.h");
  if (!hdr) return -1;
  size_t len = strlen(hdr) + 64;
  char *in = malloc(len), *fl = strdup(flags ? flags : "");
  if (!in || !fl) { free(in); free(fl); return -1; }
  snprintf(in, len, "%s\nftax_isa_is FT_ISA_NAME\n", hdr);
  char *argv[256];
  int k = 0;
  argv[k++] = (char *)cc;
  for (char *t = strtok(fl, " \t"); t && k < 248; t = strtok(NULL, " \t")) argv[k++] = t;
  argv[k++] = "-E";
  argv[k++] = "-P";
  argv[k++] = "-x";
  argv[k++] = "c";
  argv[k++] = "-";
  argv[k] = NULL;
  char out[8192];
  int rc = run_filter(argv, in, out, sizeof out);
  free(in);
  free(fl);
  const char *at = rc ? NULL : strstr(out, "ftax_isa_is \"");
  if (!at) return -1;
  at += strlen("ftax_isa_is \"");
  size_t m = strcspn(at, "\"");
  char name[32];
  if (at[m] != '"' || m >= sizeof name) return -1;
  snprintf(name, sizeof name, "%.*s", (int)m, at);
  if (!ft_isa_known(name)) return -1;
  snprintf(isa, n, "%s", name);
  return 0;
}

const char *ft_cc_default_flags(const ft_cc_target *t) {
  return t->cross ? "-O3 -pthread" : "-O3 -march=native -pthread";
}

/* ---- ELF section headers ---------------------------------------------------------------- */

static uint64_t elf_uint(const unsigned char *p, int bytes, int big) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[big ? bytes - 1 - i : i] << (8 * i);
  return v;
}

enum { SHF_WRITE_ = 1, SHF_ALLOC_ = 2, SHF_EXEC_ = 4, SHT_NOBITS_ = 8 };

/* One section header's type, flags and size into s. */
static void elf_count(const unsigned char *sh, int is64, int big, ft_elf_sizes *s) {
  uint64_t type = elf_uint(sh + 4, 4, big);
  uint64_t flags = elf_uint(sh + 8, is64 ? 8 : 4, big);
  uint64_t size = elf_uint(sh + (is64 ? 32 : 20), is64 ? 8 : 4, big);
  if (!(flags & SHF_ALLOC_)) return;
  if (flags & SHF_EXEC_) s->code += size;
  else if (!(flags & SHF_WRITE_)) s->rodata += size;
  else if (type == SHT_NOBITS_) s->bss += size;
  else s->data += size;
}

int ft_elf_sizes_read(const char *path, ft_elf_sizes *s) {
  memset(s, 0, sizeof *s);
  unsigned char h[64], sh[64];
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  int ok = fread(h, 1, sizeof h, f) == sizeof h && !memcmp(h, "\177ELF", 4) && (h[4] == 1 || h[4] == 2) &&
           (h[5] == 1 || h[5] == 2);
  int is64 = h[4] == 2, big = h[5] == 2;
  uint64_t off = ok ? elf_uint(h + (is64 ? 0x28 : 0x20), is64 ? 8 : 4, big) : 0;
  uint64_t entsize = ok ? elf_uint(h + (is64 ? 0x3A : 0x2E), 2, big) : 0;
  uint64_t num = ok ? elf_uint(h + (is64 ? 0x3C : 0x30), 2, big) : 0;
  ok = ok && off && entsize >= (is64 ? 40u : 32u) && entsize <= sizeof sh;
  for (uint64_t i = 0; ok && i < num; i++) {
    ok = fseek(f, (long)(off + i * entsize), SEEK_SET) == 0 && fread(sh, 1, entsize, f) == entsize;
    if (ok) elf_count(sh, is64, big, s);
  }
  fclose(f);
  return ok ? 0 : -1;
}
