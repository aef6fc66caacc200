"""The packers: PACR moves datums from Dst through their format conversion to L1.

- unit: PACR (Blackhole's one packer and its four Dst read interfaces: the input and output address
  generators, the Dst fetch) and PACR_SETREG, with Blackhole's encoding and readings
- convert: the datums' way from Dst to the output buffers: the early and late format conversions,
  edge masking, ReLU and exponent thresholding
- stream: the packers' output streams (their L1 addresses and 16-byte buffers: PackState), the
  writes to L1 and its accumulate, and the pipeline that accepts a PACR and drains later
- wormhole: Wormhole's PACR and PACR_SETREG (its encodings and four packers), through the stages
  above

Importing this package imports none of them: the coprocessor imports each one, which registers its
instructions' semantics.
"""
