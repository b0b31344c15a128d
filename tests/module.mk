# tests/: test_alloc_fail links with the allocation functions, jansson's parser and its
# printer wrapped (see its top comment).
# The grammar's external scanner does not check its allocations, so its object joins the link
# with its calls renamed to the real functions, and the archive's copy is not used.
ALLOC_WRAP := malloc calloc realloc free strdup strndup realpath json_loadb json_loads \
    json_dumps
$(B)/tests/scanner_unwrapped.o: $(B)/grammars/tree-sitter-python/scanner.o
	@mkdir -p $(dir $@)
	objcopy $(foreach f,malloc calloc realloc free,--redefine-sym $(f)=__real_$(f)) $< $@

$(B)/tests/test_alloc_fail: tests/test_alloc_fail.c tests/testlib.h \
    $(B)/tests/scanner_unwrapped.o $(B)/libcalcroute-dev.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $< $(B)/tests/scanner_unwrapped.o \
	    $(B)/libcalcroute-dev.a $(PKG_LIBS) $(foreach f,$(ALLOC_WRAP),-Wl$(COMMA)--wrap=$(f))
