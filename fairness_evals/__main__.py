import sys

from fairness_evals.cli import main

sys.exit(main())
