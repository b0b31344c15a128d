# dsl/module.mk: the FinQA DSL bench (bench/bench_dsl.c, beside bench/bench_dsl.py), built
# with everything else so that it keeps compiling; run it from the repo root:
#   build/bench_dsl [CORPUS_DIR [ROUNDS]]
all: $(B)/bench_dsl

$(B)/bench_dsl: bench/bench_dsl.c tests/finqa_corpus.h $(B)/libcalcroute.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/libcalcroute.a $(PKG_LIBS)

# The corpus test shares the loader header with the bench.
$(B)/tests/test_finqa_corpus: tests/finqa_corpus.h

# libFuzzer wants clang; the DSL and what it needs are rebuilt with the same sanitizers.
FUZZ_CC ?= clang
$(B)/fuzz/fuzz_dsl: fuzz/fuzz_dsl.c common/common.c parser/ir.c $(wildcard dsl/*.c)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined $(CPPFLAGS) \
	    -w -o $@ $^ $(PKG_LIBS)

fuzz: $(B)/fuzz/fuzz_dsl
