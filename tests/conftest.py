import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# "ci" (the default, and what `make test` selects): every property test draws the same examples on
# every run and machine, with no example database, so a run is reproducible. "thorough": fresh random
# examples (1000 for tests that set no count of their own), for long local runs
# (pytest --hypothesis-profile=thorough).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("thorough", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ---------------------------------------------------------------- tt-metal firmware from the ttnn wheel
TTNN_CACHE = Path(__file__).resolve().parent.parent / ".cache" / "ttnn"
# The firmware generations the metal tests run on: the ttnn release tensixsim targets, and the oldest
# ttnn wheel that carries pre-compiled firmware (its launch_msg_t has no kernel_text_size, three
# programmable core types, every member at another offset; its DWARF does not record the argument of
# do_crt1). Each wheel is downloaded once per machine into TTNN_CACHE.
FIRMWARE_VERSIONS = ("0.81.1", "0.67.4")


@pytest.fixture(scope="session", params=FIRMWARE_VERSIONS)
def ttnn_version(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def precompiled(ttnn_version: str) -> Path:
    from tensixsim.metal.wheel import precompiled_firmware

    return precompiled_firmware(TTNN_CACHE, ttnn_version)


@pytest.fixture(scope="session")
def blackhole_set(precompiled: Path):
    from tensixsim.metal.firmware import find_firmware_set

    return find_firmware_set(precompiled, "blackhole")
