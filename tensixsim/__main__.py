import sys

from tensixsim.cli import main

sys.exit(main())
