#ifndef FTAX_VERSION_H
#define FTAX_VERSION_H
#define FTAX_VERSION "0.1.0"
#endif
