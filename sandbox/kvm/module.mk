# sandbox/kvm/module.mk: the guest kernel (unpacked, never installed) and the nested test host.
# The kernel sits outside $(B) so the ASan build shares it.
KVM_KERNEL_DIR ?= build/kvm/kernel
KVM_GUEST_DIR ?= build/kvm/guest
.PHONY: kvm-kernel kvm-guest check-kvm check-kvm-asan
kvm-kernel:
	sandbox/kvm/fetch-kernel.sh $(KVM_KERNEL_DIR)
# The guest initramfs: our static init with the ns tier in it, this host's python3 and its
# standard library.
kvm-guest: $(KVM_GUEST_DIR)/initrd.cpio
$(KVM_GUEST_DIR)/initrd.cpio: sandbox/guest/init.c sandbox/guest/build.sh sandbox/runner.py \
    sandbox/numpy_financial.py \
    $(wildcard sandbox/*.[ch] sandbox/ns/*.[ch] sandbox/kvm/*.[ch] common/*.[ch])
	sandbox/guest/build.sh $(KVM_GUEST_DIR)
# Every test_kvm* binary inside QEMU (software emulation, emulated SVM) with kvm-amd loaded.
check-kvm: all kvm-kernel kvm-guest
	KVMHOST_KERNEL=$(KVM_KERNEL_DIR) KVMHOST_GUEST=$(KVM_GUEST_DIR) tests/kvm-host/run.sh $(B)
check-kvm-asan:
	$(MAKE) B=build/asan SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' CFLAGS='-O1 -g' check-kvm
