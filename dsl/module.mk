# dsl/module.mk: the FinQA corpus test and bench/bench_dsl (built by the top Makefile as
# build/bench/bench_dsl, run from the repo root) share tests/finqa_corpus.h.
$(B)/tests/test_finqa_corpus $(B)/bench/bench_dsl: tests/finqa_corpus.h

# libFuzzer wants clang; the DSL and what it needs are rebuilt with the same sanitizers.
FUZZ_CC ?= clang
$(B)/fuzz/fuzz_dsl: fuzz/fuzz_dsl.c common/common.c parser/ir.c $(wildcard dsl/*.c)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined $(CPPFLAGS) \
	    -w -o $@ $^ $(PKG_LIBS)

fuzz: $(B)/fuzz/fuzz_dsl
