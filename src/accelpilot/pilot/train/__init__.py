"""The training pilot (`accelpilot run train`), one module per concern.

``config`` (what a run accepts and resolves to; torch-free, so the CLI reads its defaults without torch),
``loop`` (the step and the timed loop), ``measure`` (first run, throughput, profiler, time to target),
``shapes`` (compile counters, recompilation, padding), ``parity`` (reference outputs and comparison),
``resilience`` (checkpoint and interrupt phases), ``checkpoint`` (atomic checkpoint IO), ``worker`` (the
child process) and ``launch`` (its parent side), ``record`` (the context and measurements phases share),
``pilot`` (the phases in order, and the result).

Nothing is imported here, so importing the package (the CLI does, for defaults) does not import torch.
"""
