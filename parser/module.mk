# parser/: the corpus measurement (make parser-corpus [CORPUS_DIR=...]) and the fuzz target.
CORPUS_DIR ?= ../shared/corpus/python
FUZZ_CC ?= clang

$(B)/tools/parser_corpus: tests/tools/parser_corpus.c $(B)/libcalcroute.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(B)/libcalcroute.a $(PKG_LIBS)

.PHONY: parser-corpus
parser-corpus: $(B)/tools/parser_corpus
	$(B)/tools/parser_corpus $(CORPUS_DIR)

# libFuzzer wants clang; the library is rebuilt from source with the same sanitizers.
$(B)/fuzz/fuzz_parser: fuzz/fuzz_parser.c common/common.c $(wildcard parser/*.c) $(GRAMMAR_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined $(CPPFLAGS) \
	    -Igrammars/tree-sitter-python -w -o $@ $^ $(PKG_LIBS)

fuzz: $(B)/fuzz/fuzz_parser
