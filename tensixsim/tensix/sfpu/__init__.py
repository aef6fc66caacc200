"""The vector unit (SFPU): 32 lanes of 32-bit LRegs, fed from and stored to Dst.

- unit: the unit's state, its immediate loads, moves and configuration, and what the other modules share
- dst: the vector unit's way to and from Dst: SFPLOAD, SFPSTORE, the Dst address, cells and datum
  conversions
- flags: lane predication (SFPSETCC, SFPENCC, SFPPUSHC, SFPPOPC, SFPCOMPC)
- integers: integer and bit instructions (SFPIADD, SFPSHFT, SFPAND, ...)
- floats: the MAD sub-unit (SFPMAD and its family, LUTs) and SFPARECIP, SFPDIVP2, SFPGT, SFPLE
- lanes: swaps, transposes and shuffles across lanes and LRegs (SFPSWAP, SFPTRANSP, SFPSHFT2)
- convert: conversions (SFPCAST, SFP_STOCH_RND) and the PRNG
- macro: SFPLOADMACRO and the work it schedules onto the sub-units
- fma: the multiply-add of each chip (Blackhole's and Wormhole's bit-exact models)
- hazards: the rules Wormhole's unstalled instructions leave for the next cycle
- wormhole: Wormhole's variants of the instructions whose encoding or model differ (the others are
  registered for both chips in the modules above)

Importing this package imports none of them: the coprocessor imports each one, which registers its
instructions' semantics.
"""
