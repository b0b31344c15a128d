/* cli/mhd.h: libmicrohttpd, loaded when a server starts (calc-route serve, calc-audit
 * witness). Linked in, it would cost every one-shot run: its constructor initialises GnuTLS
 * (0.6M instructions with the static archive, which also binds p11-kit and libffi: 2.0M
 * against 0.9M for the whole run; 4.8M linked shared). A server loads it once instead. */
#ifndef CR_CLI_MHD_H
#define CR_CLI_MHD_H

#include <microhttpd.h>

#define MHD_SONAME "libmicrohttpd.so.12"   /* the ABI microhttpd.h 0.9.x describes */
#define MHD_FUNCTIONS(X) X(start_daemon) X(stop_daemon) X(quiesce_daemon) X(get_daemon_info) \
    X(queue_response) X(destroy_response) X(add_response_header) \
    X(create_response_from_buffer) X(create_response_from_callback) \
    X(lookup_connection_value) X(get_connection_values) X(get_connection_info)

struct cr_mhd {
#define X(f) __typeof__(MHD_##f) *f;
    MHD_FUNCTIONS(X)
#undef X
};
extern struct cr_mhd mhd;

/* Loads it (who: the program and mode, for the message); 0, or -1 having said why. Kept
 * loaded: the process ends soon after its server. */
int cr_mhd_load(const char *who);

#endif
