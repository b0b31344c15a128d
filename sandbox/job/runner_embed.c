/* sandbox/job/runner_embed.c: sandbox/runner.py, and the modules the runner serves to the code
 * (sandbox/numpy_financial.py), as bytes of the library, so that no install path is ever
 * looked up at run time. The assembler copies the file (.incbin, path relative to the
 * repository root where make runs; sandbox/module.mk makes this object depend on it). */
#include <stddef.h>

__asm__(".section .rodata\n"
        ".global sandbox_runner_source\n"
        ".hidden sandbox_runner_source\n"
        ".type sandbox_runner_source, @object\n"
        "sandbox_runner_source:\n"
        ".incbin \"sandbox/runner.py\"\n"
        "sandbox_runner_source_end:\n"
        ".byte 0\n"
        ".balign 8\n"
        ".global sandbox_runner_source_len\n"
        ".hidden sandbox_runner_source_len\n"
        ".type sandbox_runner_source_len, @object\n"
        "sandbox_runner_source_len:\n"
        ".quad sandbox_runner_source_end - sandbox_runner_source\n"
        ".global sandbox_npf_source\n"
        ".hidden sandbox_npf_source\n"
        ".type sandbox_npf_source, @object\n"
        "sandbox_npf_source:\n"
        ".incbin \"sandbox/numpy_financial.py\"\n"
        "sandbox_npf_source_end:\n"
        ".byte 0\n"
        ".balign 8\n"
        ".global sandbox_npf_source_len\n"
        ".hidden sandbox_npf_source_len\n"
        ".type sandbox_npf_source_len, @object\n"
        "sandbox_npf_source_len:\n"
        ".quad sandbox_npf_source_end - sandbox_npf_source\n"
        ".previous\n");
