/* calcroute.h: the one public header of libcalcroute.
 *
 * calcroute answers code that a language model wrote for a finance question: whitelisted
 * arithmetic runs in-process on exact decimals, everything else in a sandbox, and every
 * request leaves a record in a tamper-evident audit chain.
 *
 * Ownership: every function that returns a pointer says who owns it. Free functions accept
 * NULL. Nothing here calls exit() or abort().
 */
#ifndef CALCROUTE_H
#define CALCROUTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CR_API __attribute__((visibility("default")))

#define CR_VERSION_STRING "0.1.0"

/* Status codes. Codes below CR_EPY_BASE are failures of calcroute or of the request; codes
 * from CR_EPY_BASE on are Python exceptions raised by the user's code (a *result*, not a
 * failure of the engine). cr_strerror() names each. */
typedef enum {
    CR_OK = 0,
    CR_ENOMEM,       /* an allocation failed */
    CR_EUSAGE,       /* a bad argument from the caller */
    CR_EIO,          /* reading or writing a file failed */
    CR_ESYNTAX,      /* the code does not parse */
    CR_EUNSUPPORTED, /* the code is outside the in-process subset (see the reasons) */
    CR_ELIMIT,       /* a resource limit was hit (LimitError); the message names the limit */
    CR_EREJECTED,    /* the policy forbids running this code */
    CR_ESANDBOX,     /* a sandbox could not be set up or run */
    CR_EAUDIT,       /* the audit ledger could not be written or read */
    CR_EINTERNAL,    /* a bug in calcroute */
    CR_EPY_BASE = 32,
    CR_EPY_ZERODIV = CR_EPY_BASE, /* ZeroDivisionError */
    CR_EPY_NAME,                  /* NameError */
    CR_EPY_UNBOUND,               /* UnboundLocalError */
    CR_EPY_TYPE,                  /* TypeError */
    CR_EPY_VALUE,                 /* ValueError */
    CR_EPY_OVERFLOW,              /* OverflowError */
    CR_EPY_INDEX,                 /* IndexError */
    CR_EPY_KEY,                   /* KeyError */
    CR_EPY_ATTRIBUTE,             /* AttributeError */
    CR_EPY_ASSERTION,             /* AssertionError */
    CR_EPY_RECURSION,             /* RecursionError */
    CR_EPY_EXCEPTION,             /* Exception (raised by the user's code) */
    CR_EPY_END
} cr_code;

/* An error the caller provides; filled when a function fails. line and col are 1-based and
 * 0 when the error has no position in the code. `type` is the Python exception name for
 * CR_EPY_* codes, "LimitError" for CR_ELIMIT, and "" otherwise. */
typedef struct {
    cr_code code;
    int line, col;
    char type[32];
    char message[256];
} cr_error;

/* A static string naming the code ("ZeroDivisionError", "syntax error", ...). Never NULL. */
CR_API const char *cr_strerror(cr_code code);

#ifdef __cplusplus
}
#endif
#endif
