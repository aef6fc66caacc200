"""The sections of the native engine's generated headers, a module per unit (gen_fields.py renders
and writes the headers: ``python -m tensixsim.tensix.native.gen_fields``).

- common: the ``#define`` writer, header preambles, Config field specs;
- matrix, pack, unpack, sync (with the scalar unit's memory instructions): each unit's section of
  ``constants.h``;
- sfpu_tables: ``sfpu_tables.h``.
"""
