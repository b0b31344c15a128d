# sandbox/kvm/module.mk: the guest kernel (unpacked into the build tree, never onto this host),
# its initramfs, their installation, and the nested test host.
# The kernel sits outside $(B) so the ASan build shares it.
KVM_KERNEL_DIR ?= build/kvm/kernel
KVM_GUEST_DIR ?= build/kvm/guest
# The build tree's kvm directory (sandbox/kvm/vmm.h: KVM_DIR_BUILD), which the tier uses when
# run from the checkout's top: links to the two files the targets below make.
KVM_DIR ?= build/kvm
# Where an installed calc-route or library finds them (vmm.h: KVM_DIR_INSTALLED); the package
# image too when it was built.
KVM_INSTALL = install -Dm644 -t '$(DESTDIR)$(LIBDIR)/calcroute/kvm' $(KVM_DIR)/vmlinuz \
    $(KVM_DIR)/initrd.cpio $(wildcard $(KVM_DIR)/pkgs.erofs)
.PHONY: kvm-kernel kvm-guest kvm-pkgs install-kvm kvm-snapshot check-kvm check-kvm-asan bench-kvm
kvm-kernel:
	sandbox/kvm/fetch-kernel.sh $(KVM_KERNEL_DIR)
	@mkdir -p $(KVM_DIR) && ln -sfr $(KVM_KERNEL_DIR)/vmlinuz $(KVM_DIR)/vmlinuz
# The guest initramfs: our static init with the ns tier in it, this host's python3 and its
# standard library, and the kernel modules that mount the package image.
kvm-guest: $(KVM_GUEST_DIR)/initrd.cpio
	@mkdir -p $(KVM_DIR) && ln -sfr $(KVM_GUEST_DIR)/initrd.cpio $(KVM_DIR)/initrd.cpio
# The package image (numpy, pandas, scipy, ...: sandbox/guest/build-pkgs.sh), which the VMM
# gives the guest as read-only persistent memory. Optional: without it the guest's python has
# the standard library only.
kvm-pkgs: $(KVM_GUEST_DIR)/pkgs.erofs
	@mkdir -p $(KVM_DIR) && ln -sfr $(KVM_GUEST_DIR)/pkgs.erofs $(KVM_DIR)/pkgs.erofs
$(KVM_GUEST_DIR)/pkgs.erofs: sandbox/guest/build-pkgs.sh sandbox/guest/lib.sh
	sandbox/guest/build-pkgs.sh $(KVM_GUEST_DIR)
# `make install` installs the guest when it was built (it takes minutes: not part of `all`);
# this builds it first.
install-kvm: kvm-kernel kvm-guest kvm-pkgs
	$(KVM_INSTALL)
$(KVM_GUEST_DIR)/initrd.cpio: sandbox/guest/init.c sandbox/guest/build.sh sandbox/guest/lib.sh \
    sandbox/runner.py sandbox/numpy_financial.py $(wildcard $(KVM_KERNEL_DIR)/version) \
    $(wildcard sandbox/*.[ch] sandbox/job/*.[ch] sandbox/ns/*.[ch] sandbox/kvm/*.[ch] common/*.[ch]) | kvm-kernel
	KVM_MODULES=$(KVM_KERNEL_DIR)/modules sandbox/guest/build.sh $(KVM_GUEST_DIR)
# Every test_kvm* binary inside QEMU (software emulation, emulated SVM) with kvm-amd loaded,
# the guest given the package image.
check-kvm: all kvm-kernel kvm-guest kvm-pkgs
	KVMHOST_KERNEL=$(KVM_KERNEL_DIR) KVMHOST_GUEST=$(KVM_GUEST_DIR) tests/kvm-host/run.sh $(B)
check-kvm-asan:
	$(MAKE) B=build/asan SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' CFLAGS='-O1 -g' check-kvm
# The guest's snapshot beside its initramfs (CR_KVM_SNAPSHOT names another place), made by
# one run; any request that finds none makes it too. Only where KVM boots Linux: on a host
# like this one's build machines that is inside the nested test host, where check-kvm and
# bench-kvm make their own.
kvm-snapshot: all kvm-kernel kvm-guest
	echo 'import os; print(1)' | CALCROUTE_KVM_DIR=$(KVM_DIR) \
	    $(B)/calc-route --tier kvm --json - | \
	    grep -o '"tier_note":"[^"]*"'
# Restore beside cold boot, to result (bench/bench_kvm.sh; inside the nested host here).
bench-kvm: all kvm-kernel kvm-guest kvm-pkgs
	BENCH_KVM_MODE=snapshot sh bench/bench_kvm.sh $(B)
