"""The configuration unit: ThreadConfig and the two unit-configuration states (Config), and each chip's
layout of their fields.

- unit: the state (ConfigState), the layouts (ConfigLayout), SETC16, WRCFG, RDCFG, RMWCIB,
  CFGSHIFTMASK, STREAMWRCFG and the MMIO view
- fields_blackhole: Blackhole's field table, as data
- fields_wormhole: Wormhole's field table, as data (rendered by tools/gen_config_fields.py)

Importing this package imports none of them: the coprocessor imports the unit, which registers its
instructions' semantics.
"""
