# sandbox/kvm/module.mk: the guest kernel (unpacked, never installed) and the nested test host.
# The kernel sits outside $(B) so the ASan build shares it.
KVM_KERNEL_DIR ?= build/kvm/kernel
.PHONY: kvm-kernel check-kvm check-kvm-asan
kvm-kernel:
	sandbox/kvm/fetch-kernel.sh $(KVM_KERNEL_DIR)
# Every test_kvm* binary inside QEMU (software emulation, emulated SVM) with kvm-amd loaded.
check-kvm: all kvm-kernel
	KVMHOST_KERNEL=$(KVM_KERNEL_DIR) tests/kvm-host/run.sh $(B)
check-kvm-asan:
	$(MAKE) B=build/asan SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' CFLAGS='-O1 -g' check-kvm
