/* SHA-256 of a file, as 64 hex digits: identifies the model in generated code and weights. */
#ifndef FTAX_SHA256_H
#define FTAX_SHA256_H
int ft_sha256_file(const char *path, char hex[65]);
#endif
