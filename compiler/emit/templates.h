/* Kernel templates embedded into ftaxc at build time (tools/embed). */
#ifndef FTAX_TEMPLATES_H
#define FTAX_TEMPLATES_H

/* The text of templates/DIR/NAME, or NULL. */
const char *ft_template_text(const char *name);
/* The folder under templates/ NAME lies in: "c", "cuda" or "common". */
const char *ft_template_dir(const char *name);
/* The embedded file name matching NAME (a bare file name or a path ending in it), or NULL. */
const char *ft_template_name(const char *name);

/* The name of the I-th embedded template (in the order they were embedded), NULL past the last:
 * for tests that check every template together. */
const char *ft_template_nth(int i);

#endif
