/* Text that came from a model or an input file, made safe to print or to write into a generated
 * source. Shared by ftaxc, ftax-eager and generated programs: a model is untrusted data, and a name
 * in it may hold terminal escapes, a newline, or the end of a C comment.
 *
 * ft_text_escape copies src into dst and replaces with \xHH every byte that could act on a terminal
 * or on a reader of the text: control bytes (newline and tab included) and DEL, bytes that are not
 * part of valid UTF-8, the C1 controls U+0080..U+009F, and the Unicode bidirectional controls
 * (U+200E/F, U+202A..U+202E, U+2066..U+2069) that make source text read differently than it
 * compiles. Printable ASCII and other valid UTF-8 pass unchanged. Nothing it writes contains a
 * '*' or '/' that src did not, so a caller that also breaks up "*" followed by "/" (comments) gets
 * text that cannot end a comment. */
#ifndef FT_TEXT_H
#define FT_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (at most avail bytes) that is safe to show, 0 if there is
 * none there (invalid, overlong, surrogate, C1 or bidirectional control). */
static inline size_t ft_text_utf8_ok(const unsigned char *s, size_t avail) {
  unsigned c = s[0];
  size_t len;
  unsigned cp;
  if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
  else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
  else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
  else return 0;
  if (avail < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0; /* overlong */
  if (cp >= 0xd800 && cp <= 0xdfff) return 0;                                                /* surrogate */
  if (cp >= 0x80 && cp <= 0x9f) return 0;                                                    /* C1 */
  if (cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return 0;
  return len;
}

/* Escape len bytes of src (NUL bytes included) into dst of size n, always NUL-terminated and cut
 * at a whole escape; returns dst. */
static inline char *ft_text_escape_n(char *dst, size_t n, const char *src, size_t len) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)src;
  size_t k = 0;
  if (!n) return dst;
  for (size_t i = 0; i < len;) {
    size_t u = s[i] >= 0x80 ? ft_text_utf8_ok(s + i, len - i) : 0;
    if (u) {
      if (k + u >= n) break;
      for (size_t j = 0; j < u; j++) dst[k++] = (char)s[i + j];
      i += u;
    } else if (s[i] >= 0x20 && s[i] < 0x7f) {
      if (k + 1 >= n) break;
      dst[k++] = (char)s[i++];
    } else {
      if (k + 4 >= n) break;
      dst[k++] = '\\'; dst[k++] = 'x'; dst[k++] = hex[s[i] >> 4]; dst[k++] = hex[s[i] & 15];
      i++;
    }
  }
  dst[k] = 0;
  return dst;
}

static inline char *ft_text_escape(char *dst, size_t n, const char *src) {
  size_t len = 0;
  if (!src) src = "";
  while (src[len]) len++;
  return ft_text_escape_n(dst, n, src, len);
}

/* Print src escaped to f, without a length limit. */
static inline void ft_text_put(FILE *f, const char *src) {
  char buf[256];
  size_t len = 0;
  if (!src) src = "";
  while (src[len]) len++;
  /* in pieces that never split a UTF-8 sequence: cut before a continuation byte */
  for (size_t i = 0; i < len;) {
    size_t m = len - i < 48 ? len - i : 48;
    while (i + m < len && m > 1 && ((unsigned char)src[i + m] & 0xc0) == 0x80) m--;
    fputs(ft_text_escape_n(buf, sizeof buf, src + i, m), f);
    i += m;
  }
}

/* The same as a JSON string: escaped as above, then quotes and backslashes (the escapes' own
 * included) backslashed. */
static inline void ft_text_put_json(FILE *f, const char *src) {
  char buf[1024];
  ft_text_escape(buf, sizeof buf, src);
  fputc('"', f);
  for (const char *c = buf; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', f);
    fputc(*c, f);
  }
  fputc('"', f);
}

#endif
