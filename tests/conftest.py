import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# "ci" (the default, and what `make test` selects): every property test draws the same examples on
# every run and machine, with no example database, so a run is reproducible. "thorough": fresh random
# examples (1000 for tests that set no count of their own), for long local runs
# (pytest --hypothesis-profile=thorough).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("thorough", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
