/* tests/test_kvm_attacks.c: the ns tier's attack suite (tests/test_sandbox_attacks.c), every
 * program and every expected output unchanged, run on the kvm tier. The guest runs the ns
 * tier inside its VM, so the code must meet exactly the same walls there. It skips, saying
 * why, where a Linux guest cannot run; the nested test host (tests/kvm-host/) runs it. */
#define SANDBOX_TEST_TIER CR_TIER_KVM
#include "tests/test_sandbox_attacks.c"
