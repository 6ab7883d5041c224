/* Reset and fault handling for a Cortex-M under qemu-system-arm -M mps2-an500, and semihosting
 * output (the debugger's console: qemu prints it on stdout with -semihosting). Just enough to run
 * a freestanding ftax library: copy .data, zero .bss, turn the FPU on, call main, exit with its
 * status. The linker script is mps2-an500.ld. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t ftb_data_start[], ftb_data_end[], ftb_data_load[], ftb_bss_start[], ftb_bss_end[];
extern uint32_t ftb_stack_top[];
int main(void);

/* A semihosting call: the operation in r0, its argument in r1, bkpt 0xAB traps to the host. */
long ftb_semihost(long op, const void *arg) {
  register long r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void ftb_puts(const char *s) { ftb_semihost(FTB_SYS_WRITE0, s); }

/* SYS_EXIT with ADP_Stopped_ApplicationExit ends qemu with status 0; any other reason with 1. */
__attribute__((noreturn)) void ftb_exit(int status) {
  ftb_semihost(FTB_SYS_EXIT, (const void *)(uintptr_t)(status ? 0x20023 : 0x20026));
  for (;;) {}
}

__attribute__((noreturn)) void ftb_reset(void) {
  for (uint32_t *s = ftb_data_load, *d = ftb_data_start; d < ftb_data_end;) *d++ = *s++;
  for (uint32_t *d = ftb_bss_start; d < ftb_bss_end;) *d++ = 0;
  /* CPACR: full access to the FPU (coprocessors 10 and 11) before the first float instruction */
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
  __asm__ volatile("dsb\n isb");
  ftb_exit(main());
}

__attribute__((noreturn)) static void ftb_fault(void) {
  ftb_puts("ftb: fault (hard fault, bus or usage fault, or an unexpected interrupt)\n");
  ftb_exit(1);
}

/* The vector table: the initial stack pointer, then the handlers (reset, NMI, the faults ...). */
__attribute__((section(".vectors"), used)) static void (*const ftb_vectors[16])(void) = {
    (void (*)(void))ftb_stack_top, ftb_reset, ftb_fault, ftb_fault, ftb_fault, ftb_fault, ftb_fault,
    0, 0, 0, 0, ftb_fault, ftb_fault, 0, ftb_fault, ftb_fault,
};
