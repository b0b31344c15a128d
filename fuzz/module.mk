# fuzz/module.mk: every libFuzzer target, and `make fuzz FUZZ_SECONDS=N`, which runs each
# target N seconds (default 60) and fails when any of them finds something.
#
# libFuzzer wants clang, so the library is rebuilt from source with clang and the fuzzer's
# coverage and sanitizers (never the gcc objects of the normal build) into $(B)/fuzz/obj,
# archived once, and every target links against that archive.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CORPUS ?= ../shared/corpus
FUZZ_B := $(B)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 $(FUZZ_SAN) -w
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_B)/%)
FUZZ_OBJ := $(LIB_SRC:%.c=$(FUZZ_B)/obj/%.o) $(GRAMMAR_SRC:%.c=$(FUZZ_B)/obj/%.o)

$(FUZZ_B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -Igrammars/tree-sitter-python $(FUZZ_CFLAGS) \
	    -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_B)/libcalcroute-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_B)/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/*.h) $(FUZZ_B)/libcalcroute-fuzz.a
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
	    $(FUZZ_B)/libcalcroute-fuzz.a $(PKG_LIBS)

# Seeds: the unit tests' snippets and a sample of $(FUZZ_CORPUS), rebuilt when either changes.
$(FUZZ_B)/seeds/.stamp: fuzz/seeds.py $(wildcard tests/test_*.c) \
    $(wildcard $(FUZZ_CORPUS)/*/*.jsonl)
	/usr/bin/python3 fuzz/seeds.py --corpus $(FUZZ_CORPUS) --out $(FUZZ_B)/seeds
	@touch $@

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BIN) $(FUZZ_B)/seeds/.stamp

fuzz: fuzz-build
	fuzz/run.sh $(FUZZ_B) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# .incbin is not seen by -MMD (see sandbox/module.mk).
$(FUZZ_B)/obj/sandbox/runner_embed.o: sandbox/runner.py

-include $(FUZZ_OBJ:.o=.d)
