# parser/: the corpus measurement (make parser-corpus [CORPUS_DIR=...]); the fuzz target is
# built by fuzz/module.mk.
CORPUS_DIR ?= ../shared/corpus/python

$(B)/tools/parser_corpus: tests/tools/parser_corpus.c $(B)/libcalcroute-dev.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $< $(B)/libcalcroute-dev.a $(PKG_LIBS)

.PHONY: parser-corpus
parser-corpus: $(B)/tools/parser_corpus
	$(B)/tools/parser_corpus $(CORPUS_DIR)
