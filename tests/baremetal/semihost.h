/* Semihosting on Arm (the debugger's, here qemu's, console and exit): startup.c. */
#ifndef FTB_SEMIHOST_H
#define FTB_SEMIHOST_H

#define FTB_SYS_WRITE0 0x04 /* print a NUL-terminated string */
#define FTB_SYS_EXIT 0x18   /* end the program */

long ftb_semihost(long op, const void *arg);
void ftb_puts(const char *s);
__attribute__((noreturn)) void ftb_exit(int status);

#endif
