# calcroute: GNU make. Targets: all, test, check-asan, bench, fuzz, install, uninstall, install-kvm,
# image (deploy/), deb (debian/), clean.
PREFIX ?= /usr/local
CC ?= cc
CFLAGS ?= -O2 -g
WERROR ?=
# What libcalcroute links, one list: the shared library, the tests, the tools' static link
# (below), the installed calcroute.pc's Libs.private and tests/test_api.sh (make print-libs).
DEP_LIBS := -ltree-sitter -lsqlite3 -lseccomp -lsodium -ljansson -lmpfr -lgmp -lunistring -lcrypto
PKG_CFLAGS := $(shell pkg-config --cflags tree-sitter sqlite3 libseccomp libsodium jansson libcrypto libpq 2>/dev/null)
PKG_LIBS := $(DEP_LIBS) -lm -lpthread
# The command-line tools take the libraries' archives: a one-formula run of calc-route spent
# 86% of its 2.0M instructions in the dynamic loader binding seven shared libraries (279k
# with the archives; 1.5 ms against 3.0 ms a run, /bin/true 1.4 ms). libc stays shared.
STATIC_LIBS := -Wl,-Bstatic $(DEP_LIBS) -Wl,-Bdynamic -lm -lpthread
# Hardening as Debian builds its packages (dpkg-buildflags): a user's CFLAGS/LDFLAGS come after
# these, so they can turn one off; what the build needs comes after theirs, so they cannot
# drop it. _FORTIFY_SOURCE wants optimisation (glibc warns without it), is left to a
# sanitizer build (ASan checks the same calls, and better), and a user's own setting wins.
# PIE: the objects are -fPIC (they also make the shared library), the executables link -pie.
HARDEN_CFLAGS := -fstack-protector-strong
HARDEN_CPPFLAGS := $(if $(SAN)$(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),,$(if \
    $(filter-out -O0,$(filter -O%,$(CFLAGS))),-D_FORTIFY_SOURCE=2))
HARDEN_LDFLAGS := -Wl,-z,relro -Wl,-z,now
EXE_LDFLAGS = $(LDFLAGS) -pie
override CFLAGS := $(HARDEN_CFLAGS) $(CFLAGS) -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden \
    -Wall -Wextra $(WERROR) $(SAN)
override CPPFLAGS := $(HARDEN_CPPFLAGS) $(CPPFLAGS) -I. -Iinclude $(PKG_CFLAGS)
override LDFLAGS := $(HARDEN_LDFLAGS) $(LDFLAGS)

B := build
COMMA := ,
# Every module's .c files join the library; a module may add rules in its own module.mk.
MODULE_DIRS := common ir parser dsl evaluator evaluator/num evaluator/value evaluator/lib evaluator/interp router sandbox sandbox/ns sandbox/kvm audit
LIB_SRC := $(foreach d,$(MODULE_DIRS),$(wildcard $(d)/*.c))
GRAMMAR_SRC := grammars/tree-sitter-python/parser.c grammars/tree-sitter-python/scanner.c
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o) $(GRAMMAR_SRC:%.c=$(B)/%.o)
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(B)/bench/%)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
CLI := $(patsubst cli/%.c,$(B)/%,$(wildcard cli/calc-*.c))
VERSION_SCRIPT := $(if $(wildcard libcalcroute.map),-Wl$(COMMA)--version-script=libcalcroute.map)

VERSION := $(shell sed -n 's/^\#define CR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' include/calcroute.h | paste -sd.)

.PHONY: all print-libs test check-asan check-tsan bench fuzz install uninstall clean
# The benchmarks build with everything, so that an interface change cannot leave them behind.
all: $(B)/libcalcroute.a $(B)/libcalcroute.so $(CLI) $(TEST_BIN) $(BENCH_BIN)

-include $(wildcard */module.mk */*/module.mk)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The generated grammar is not ours to warn about.
$(B)/grammars/%.o: grammars/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Igrammars/tree-sitter-python $(filter-out -Wall -Wextra -Werror,$(CFLAGS)) -w -c $< -o $@

# The archive embedders link exports only the header's functions: every other global of ours
# (and the bundled tree_sitter_python) is made local in one relocatable object, so that a
# program defining the same names (its own tree-sitter-python, say) links without a clash.
# The tools and tests, which use internal functions, link libcalcroute-dev.a.
$(B)/libcalcroute.a: $(LIB_OBJ) include/calcroute.h
	@rm -f $@
	sed -n 's/^CR_API .*[ *]\(cr_[a-z0-9_]*\)(.*/\1/p' include/calcroute.h >$(B)/libcalcroute.syms
	$(LD) -r -o $(B)/libcalcroute.o $(LIB_OBJ)
	objcopy --keep-global-symbols=$(B)/libcalcroute.syms $(B)/libcalcroute.o
	ar rcs $@ $(B)/libcalcroute.o

$(B)/libcalcroute-dev.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/libcalcroute.so: $(LIB_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -pthread -Wl,-soname,libcalcroute.so.0 $(VERSION_SCRIPT) -o $@ $^ $(PKG_LIBS)

$(B)/calc-%: cli/calc-%.c $(B)/libcalcroute-dev.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $< $(B)/libcalcroute-dev.a $(STATIC_LIBS)

$(B)/tests/%: tests/%.c tests/testlib.h $(B)/libcalcroute-dev.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $< $(B)/libcalcroute-dev.a $(PKG_LIBS)

$(B)/bench/%: bench/%.c $(B)/libcalcroute-dev.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $< $(B)/libcalcroute-dev.a $(PKG_LIBS)
# Its plain-PostgreSQL peer calls libpq itself (the library loads it only when needed).
$(B)/bench/bench_audit: PKG_LIBS += -lpq

print-libs:
	@echo $(PKG_LIBS)

test: all
	@tests/run.sh $(B)

check-asan:
	$(MAKE) B=build/asan SAN='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' CFLAGS='-O1 -g' test

# ThreadSanitizer on the shared-engine test and the ledger's (group commit, verify's hashing
# thread), then on serve (tests/test_serve.sh, test_serve_admission.sh's watchdog, quotas and
# Idempotency-Key, and the bench's
# SIGTERM under load: concurrent clients, /metrics, drain) and mcp (its reader thread and
# cancellations). The sandbox tiers stay out: their clone() is more than the runtime follows.
# A report from any process fails the target.
# clang's runtime: gcc 12's libtsan dies at start-up on this kernel's address layout.
TSAN_REPORTS := build/tsan/reports
check-tsan:
	$(MAKE) CC=clang WERROR= B=build/tsan SAN='-fsanitize=thread' CFLAGS='-O1 -g' build/tsan/tests/test_threads \
	    build/tsan/tests/test_audit build/tsan/calc-route build/tsan/calc-audit build/tsan/bench/bench_serve
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_threads
	# the ledger's group commit and verify's hashing thread
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_audit
	rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	rc=0; export TSAN_OPTIONS=log_path=$(CURDIR)/$(TSAN_REPORTS)/report CR_TEST_NO_SANDBOX=1 \
	    BUILD=build/tsan; \
	sh tests/test_serve.sh || rc=1; \
	sh tests/test_serve_admission.sh || rc=1; \
	sh tests/test_mcp.sh || rc=1; \
	build/tsan/bench/bench_serve build/tsan/calc-route 1 drain || rc=1; \
	for f in $(TSAN_REPORTS)/report.*; do [ -e "$$f" ] && cat "$$f" && rc=1; done; exit $$rc

bench: all $(BENCH_BIN)
	@bench/run.sh $(B)

# Where the Python package goes: the directory of $(PREFIX) that $(PYTHON) searches
# (bindings/python/sitedir.py). Computed only when installing.
PYTHON ?= python3
PYTHONDIR = $(shell $(PYTHON) bindings/python/sitedir.py '$(PREFIX)')
LIBDIR = $(PREFIX)/lib
# The loader's cache, refreshed when installing for real, as root, to a directory it searches.
LDCONFIG = case '$(DESTDIR):$(PREFIX)' in :/usr|:/usr/local) [ "$$(id -u)" != 0 ] || ldconfig ;; esac

MAN_PAGES := $(wildcard docs/*.1 docs/*.3)

# calcroute.pc is written at install time, so that it carries the prefix installed to. The
# package's libcalcroute.so.0 is a relative link to the installed library (valid under
# DESTDIR and at the final place).
install: $(B)/libcalcroute.a $(B)/libcalcroute.so $(CLI)
	install -Dm755 -t '$(DESTDIR)$(PREFIX)/bin' $(CLI)
	install -Dm644 $(B)/libcalcroute.a '$(DESTDIR)$(LIBDIR)/libcalcroute.a'
	install -Dm755 $(B)/libcalcroute.so '$(DESTDIR)$(LIBDIR)/libcalcroute.so.$(VERSION)'
	ln -sf libcalcroute.so.$(VERSION) '$(DESTDIR)$(LIBDIR)/libcalcroute.so.0'
	ln -sf libcalcroute.so.0 '$(DESTDIR)$(LIBDIR)/libcalcroute.so'
	install -Dm644 include/calcroute.h '$(DESTDIR)$(PREFIX)/include/calcroute.h'
	mkdir -p '$(DESTDIR)$(LIBDIR)/pkgconfig'
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(PKG_LIBS)|' calcroute.pc.in \
	    > '$(DESTDIR)$(LIBDIR)/pkgconfig/calcroute.pc'
	install -Dm644 -t '$(DESTDIR)$(PYTHONDIR)/calcroute' bindings/python/calcroute/__init__.py \
	    bindings/python/calcroute/py.typed
	ln -sf "$$(realpath -m --relative-to='$(DESTDIR)$(PYTHONDIR)/calcroute' \
	    '$(DESTDIR)$(LIBDIR)')/libcalcroute.so.0" '$(DESTDIR)$(PYTHONDIR)/calcroute/libcalcroute.so.0'
	for m in $(MAN_PAGES); do \
	    install -Dm644 "$$m" "$(DESTDIR)$(PREFIX)/share/man/man$${m##*.}/$${m##*/}"; done
	$(LDCONFIG)
	@if [ -f $(KVM_DIR)/vmlinuz ] && [ -f $(KVM_DIR)/initrd.cpio ]; then \
	    echo "$(KVM_INSTALL)"; $(KVM_INSTALL); \
	else echo "install: no kvm guest in $(KVM_DIR) (make install-kvm builds and installs it)"; fi

# What install put: the directories that are the package's own (the Python package with the
# __pycache__ an import left, the kvm directory with the snapshot a first request made) go
# whole; shared ones (bin/, lib/pkgconfig/, man/man1/) stay.
uninstall:
	rm -f $(foreach f,$(notdir $(CLI)),'$(DESTDIR)$(PREFIX)/bin/$(f)') \
	    $(foreach f,libcalcroute.a libcalcroute.so.$(VERSION) libcalcroute.so.0 libcalcroute.so \
	    pkgconfig/calcroute.pc,'$(DESTDIR)$(LIBDIR)/$(f)') '$(DESTDIR)$(PREFIX)/include/calcroute.h'
	for m in $(MAN_PAGES); do rm -f "$(DESTDIR)$(PREFIX)/share/man/man$${m##*.}/$${m##*/}"; done
	rm -rf '$(DESTDIR)$(PYTHONDIR)/calcroute' '$(DESTDIR)$(LIBDIR)/calcroute'
	$(LDCONFIG)

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d)
