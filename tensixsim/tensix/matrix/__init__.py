"""The matrix unit (FPU): arithmetic and data movement on SrcA, SrcB and Dst (register files: regs.py).

- unit: the arithmetic (MVMUL, DOTPV, GAPOOL, ELWMUL, ELWADD, ELWSUB, GMPOOL) and its number model
- runs: the fast path, a run of MVMULs executed as a few vectorised steps
- moves: moves between SrcA, SrcB and Dst (MOVA2D, MOVB2D, MOVD2A, MOVD2B, MOVB2A, MOVDBGA2D)
- src_shifts: lane shifts and transposes within SrcA / SrcB (SHIFTXA, SHIFTXB, TRNSPSRCB) and
  GATESRCRST, CLREXPHIST
- legacy: the legacy instructions MFCONV3S1, CONV3S1, CONV3S2, APOOL3S1, APOOL3S2
- addressing: how each chip's AddrMod operand names an ADDR_MOD slot (the bodies above take it)
- wormhole: the Wormhole registrations of the instructions above whose encodings differ, and the
  instructions no Wormhole page models (refused by name)

Importing this package imports none of them: the coprocessor imports each one, which registers its
instructions' semantics.
"""
