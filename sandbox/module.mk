# sandbox/: the runner script is assembled into the library (sandbox/runner_embed.c uses
# .incbin), so its object must be rebuilt whenever the script changes.
$(B)/sandbox/runner_embed.o: sandbox/runner.py
