/* A bare-metal run of a freestanding ftax library (ftaxc --freestanding): init, two runs on the
 * inputs built into the image, each output printed as hex bytes over semihosting, exit status 0
 * when both runs agree. The model comes in through macros: FTB_MODEL, the API prefix (-DFTB_MODEL=
 * cnn_small), FTB_HEADER, its header ("cnn_small.h"); the data through data.c, which
 * run_baremetal.py writes from a test data set (ftb_inputs, ftb_outputs and their sizes).
 *
 * Output lines: "output K HEX" for each output, then "ftb: ok". */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include FTB_HEADER
#include "semihost.h"

#define FTB_CAT_(a, b) a##_##b
#define FTB_CAT(a, b) FTB_CAT_(a, b)
#define FTB_API(x) FTB_CAT(FTB_MODEL, x)

extern const void *const ftb_inputs[];
extern void *const ftb_outputs[];
extern void *const ftb_outputs_again[];
extern const size_t ftb_output_bytes[];
extern const int ftb_num_outputs;

static void put_hex(int k, const unsigned char *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  char line[16 + 2 * 64 + 2];
  int m = 0;
  const char *head = "output ";
  while (*head) line[m++] = *head++;
  line[m++] = (char)('0' + k / 10 % 10); /* fewer than 100 outputs */
  line[m++] = (char)('0' + k % 10);
  line[m++] = ' ';
  line[m] = 0;
  ftb_puts(line);
  for (size_t i = 0; i < n; i += 64) { /* 64 bytes a call */
    m = 0;
    for (size_t j = i; j < n && j < i + 64; j++) {
      line[m++] = digits[p[j] >> 4];
      line[m++] = digits[p[j] & 15];
    }
    line[m] = 0;
    ftb_puts(line);
  }
  ftb_puts("\n");
}

int main(void) {
  FTB_API(ctx) *ctx = NULL;
  char err[160];
  if (FTB_API(init)(&ctx, NULL, err, sizeof err)) {
    ftb_puts("ftb: init failed: ");
    ftb_puts(err);
    ftb_puts("\n");
    return 1;
  }
  /* twice, into other buffers: the second run must not depend on what the first left behind */
  FTB_API(run)(ctx, ftb_inputs, ftb_outputs);
  FTB_API(run)(ctx, ftb_inputs, ftb_outputs_again);
  FTB_API(free)(ctx);
  int same = 1;
  for (int k = 0; k < ftb_num_outputs; k++) {
    put_hex(k, (const unsigned char *)ftb_outputs[k], ftb_output_bytes[k]);
    same &= !memcmp(ftb_outputs[k], ftb_outputs_again[k], ftb_output_bytes[k]);
  }
  ftb_puts(same ? "ftb: ok\n" : "ftb: the second run differs from the first\n");
  return same ? 0 : 1;
}
