import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Every property test draws the same examples on every run and machine (no example database), so a
# test run is reproducible; HYPOTHESIS_PROFILE=explore draws fresh examples for a deeper search.
settings.register_profile("derandomized", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))
