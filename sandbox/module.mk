# sandbox/: the runner script and the modules it serves are assembled into the library
# (sandbox/job/runner_embed.c uses .incbin), so its object must be rebuilt whenever they change.
$(B)/sandbox/job/runner_embed.o: sandbox/runner.py sandbox/numpy_financial.py
