"""The baby RISC-V cores."""
