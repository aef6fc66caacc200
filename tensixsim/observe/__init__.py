"""Seeing inside a run.

- ``events``: the record of an observed run (who ran, waited on what, released by whom), kept
  while ``Tile.run(observe=True)`` or ``trace=`` asks for it.
- ``trace``: writing those events as a Perfetto trace.
- ``bottleneck``: the critical path through the recorded waits: what bounded the run.
- ``progress``: the status line of a long run, and Ctrl-C stopping it at a slice boundary.
- ``dprint``: kernel prints through tt-metal's per-core DPRINT buffers (and the SDK's).
- ``device_print``: kernel prints through tt-metal's newer shared DEVICE_PRINT buffer.
"""
