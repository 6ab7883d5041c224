#include "templates.h"

#include <string.h>

extern const struct { const char *name, *dir, *text; } ft_templates[];

const char *ft_template_name(const char *name) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  for (int i = 0; ft_templates[i].name; i++)
    if (!strcmp(ft_templates[i].name, base)) return ft_templates[i].name;
  return NULL;
}

const char *ft_template_text(const char *name) {
  for (int i = 0; ft_templates[i].name; i++)
    if (!strcmp(ft_templates[i].name, name)) return ft_templates[i].text;
  return NULL;
}

const char *ft_template_dir(const char *name) {
  for (int i = 0; ft_templates[i].name; i++)
    if (!strcmp(ft_templates[i].name, name)) return ft_templates[i].dir;
  return NULL;
}

const char *ft_template_nth(int i) {
  for (int k = 0; ft_templates[k].name; k++)
    if (k == i) return ft_templates[k].name;
  return NULL;
}
