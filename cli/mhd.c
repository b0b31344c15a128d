/* cli/mhd.c: libmicrohttpd's functions, looked up once (cli/mhd.h says why). */
#include "cli/mhd.h"

#include <dlfcn.h>
#include <stdio.h>

struct cr_mhd mhd;

int cr_mhd_load(const char *who)
{
    void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s needs libmicrohttpd (Debian: libmicrohttpd12): %s\n", who,
                dlerror());
        return -1;
    }
#define X(f) \
    if (!(*(void **)&mhd.f = dlsym(h, "MHD_" #f))) { \
        fprintf(stderr, "%s: %s has no MHD_" #f "\n", who, MHD_SONAME); \
        return -1; \
    }
    MHD_FUNCTIONS(X)
#undef X
    return 0;
}
