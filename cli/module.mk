# calc-route's mcp subcommand is a file of its own, linked into calc-route alone.
$(B)/calc-route: cli/calc-route.c cli/mcp.c cli/mcp.h $(B)/libcalcroute.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ cli/calc-route.c cli/mcp.c $(B)/libcalcroute.a $(STATIC_LIBS)
