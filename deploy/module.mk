# deploy/: `make image` builds the OCI image of `calc-route serve` without pulling from any
# registry: a Debian 12 root made by mmdebstrap from Debian's packages, imported by podman,
# and one layer over it holding the tools. The root is rebuilt only when this file changes;
# a new calc-route makes a new top layer in seconds. deploy/README.md and the Kubernetes
# manifests beside it use the image.
IMAGE ?= localhost/calcroute:$(VERSION)
IMAGE_BASE := localhost/calcroute-base:$(VERSION)
IMAGE_MIRROR ?= http://deb.debian.org/debian
# What runs in the image: libmicrohttpd12 (serve dlopens it), libpq5 (loaded when a
# PostgreSQL ledger opens), python3 and the packages
# sandboxed code imports (scripts/install-deps.sh's python3-* list, which README states).
# The tools link everything else statically (Makefile, STATIC_LIBS); only libc is shared.
IMAGE_PACKAGES := libmicrohttpd12 libpq5 python3 python3-numpy python3-pandas python3-scipy \
    python3-sympy python3-statsmodels python3-matplotlib python3-dateutil
# The service's user: not root, and a uid no host account is likely to have. The manifests'
# runAsUser (tests/test_deploy.sh checks they agree).
IMAGE_UID := 10001
# Left out of the root: documentation, manuals and translations; and what python3-scipy
# brings through python3-pythran, which Depends on a C++ compiler and on boost's and
# Python's headers (pythran compiles when scipy is built; nothing runs it in the image).
IMAGE_EXCLUDE := /usr/share/doc/* /usr/share/man/* /usr/share/info/* /usr/share/locale/* \
    /usr/share/lintian/* /usr/include/* /usr/lib/gcc/* /usr/libexec/gcc/* \
    /usr/bin/x86_64-linux-gnu-lto-dump-* /usr/lib/x86_64-linux-gnu/*.a
# The packages' own test suites go after their install (py3compile wants them there).
IMAGE_TRIM := find "$$1/usr/lib/python3/dist-packages" -depth -type d -name tests \
    -exec rm -rf {} +; rm -rf "$$1"/var/cache/* "$$1"/var/lib/apt/lists/* "$$1"/var/log/*

.PHONY: image
$(B)/image/base.tar: deploy/module.mk
	@mkdir -p $(dir $@)
	mmdebstrap --variant=essential --format=tar \
	    --include='$(subst $() ,$(COMMA),$(strip $(IMAGE_PACKAGES)))' \
	    $(foreach p,$(IMAGE_EXCLUDE),--dpkgopt='path-exclude=$(p)') \
	    --customize-hook='echo "calcroute:x:$(IMAGE_UID):$(IMAGE_UID):calcroute:/nonexistent:/usr/sbin/nologin" >>"$$1/etc/passwd"' \
	    --customize-hook='echo "calcroute:x:$(IMAGE_UID):" >>"$$1/etc/group"' \
	    --customize-hook='$(IMAGE_TRIM)' \
	    bookworm $@.tmp.tar '$(IMAGE_MIRROR)'
	mv $@.tmp.tar $@

# The base's image id; imported again when the tar is new or the image is gone.
$(B)/image/base.id: $(B)/image/base.tar
	podman import $< $(IMAGE_BASE) >$@.tmp && mv $@.tmp $@

# The tag's previous image is removed once replaced, so that rebuilds leave no untagged
# images behind. Listening on every address is right in a container (the pod's network is its own; the
# Service is what is reached): serve refuses it without --listen-public.
image: $(B)/image/base.id $(B)/calc-route $(B)/calc-audit
	@podman image exists "$$(cat $<)" || { echo "podman import $(B)/image/base.tar"; \
	    podman import $(B)/image/base.tar $(IMAGE_BASE) >$<; }
	@old=$$(podman image inspect --format '{{.Id}}' $(IMAGE) 2>/dev/null); \
	c=$$(podman create "$$(cat $<)" /bin/true) && \
	    podman cp $(B)/calc-route $$c:/usr/local/bin/calc-route && \
	    podman cp $(B)/calc-audit $$c:/usr/local/bin/calc-audit && \
	    podman commit -q \
	    --change 'ENTRYPOINT ["/usr/local/bin/calc-route", "serve", "--listen", "0.0.0.0:8080", "--listen-public"]' \
	    --change 'CMD []' --change 'USER $(IMAGE_UID):$(IMAGE_UID)' --change 'EXPOSE 8080/tcp' \
	    --change 'WORKDIR /tmp' --change 'ENV LANG=C.UTF-8' $$c $(IMAGE) >/dev/null; \
	    rc=$$?; podman rm -f $$c >/dev/null; [ $$rc = 0 ] || exit $$rc; \
	    [ -z "$$old" ] || [ "$$old" = "$$(podman image inspect --format '{{.Id}}' $(IMAGE))" ] || \
	    podman rmi "$$old" >/dev/null 2>&1 || true
	@podman image inspect --format '$(IMAGE): {{.Size}} bytes' $(IMAGE)
