# dsl/module.mk: the FinQA corpus test and bench/bench_dsl (built by the top Makefile as
# build/bench/bench_dsl, run from the repo root) share tests/finqa_corpus.h.
$(B)/tests/test_finqa_corpus $(B)/bench/bench_dsl: tests/finqa_corpus.h

# The fuzz target (fuzz/fuzz_dsl.c) is built by fuzz/module.mk.
