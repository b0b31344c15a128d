/* cli/openapi.c: cli/openapi.json, the OpenAPI 3.1 description of serve's HTTP API, as bytes of
 * calc-route, so that the service answers GET /openapi.json with exactly the file the tests
 * validate and no install path is looked up. The assembler copies it (.incbin, path relative
 * to the repository root where make runs; cli/module.mk rebuilds calc-route when it changes). */
#include "cli/serve.h"

__asm__(".section .rodata\n"
        ".global cr_openapi_bytes\n"
        ".hidden cr_openapi_bytes\n"
        ".type cr_openapi_bytes, @object\n"
        "cr_openapi_bytes:\n"
        ".incbin \"cli/openapi.json\"\n"
        "cr_openapi_bytes_end:\n"
        ".byte 0\n"
        ".balign 8\n"
        ".global cr_openapi_bytes_len\n"
        ".hidden cr_openapi_bytes_len\n"
        ".type cr_openapi_bytes_len, @object\n"
        "cr_openapi_bytes_len:\n"
        ".quad cr_openapi_bytes_end - cr_openapi_bytes\n"
        ".previous\n");

extern const char cr_openapi_bytes[];
extern const size_t cr_openapi_bytes_len;

const char *cr_openapi_json(size_t *len)
{
    *len = cr_openapi_bytes_len;
    return cr_openapi_bytes;
}
