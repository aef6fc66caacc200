"""The frontend: each thread's way from the cores' pushes to the units, input queue -> MOP expander ->
replay expander -> wait gate -> unit.

- pipes: the pipes and the engine that runs them in cycle order (the wait gate, the units' semantics,
  the fast paths) and NOP
- expanders: the MOP and replay expanders (MOP, MOP_CFG, REPLAY), their state and MMIO view
- capture: the input queues the cores push into, and the recorder of capture-only runs

Importing this package imports none of them: the tile imports pipes (its engine) and capture, the
coprocessor imports expanders.
"""
