"""The unpackers: UNPACR moves datums from L1 into SrcA / SrcB / Dst, converting their format.

- unit: UNPACR (its three modes and the regular unpack) with Blackhole's encoding and readings, the
  model Wormhole's registrations share
- src_banks: the unpackers' side of the SrcA / SrcB banks: the hand-over to the matrix unit (FlipSrc)
  and UNPACR_NOP (ZEROSRC, SETDVALID)
- convert: the format conversion of the datums, and their and their BFP exponents' gathering from L1
- fetch: the unpackers' L1 fetch: its timing, the state kept between instructions (UnpackState) and
  the wait of an instruction for an unpacker still fetching
- wormhole: Wormhole's UNPACR and UNPACR_NOP (its encodings and the pages' own readings)

Importing this package imports none of them: the coprocessor imports each one, which registers its
instructions' semantics.
"""
