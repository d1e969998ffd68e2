import sys

from fairness_evals.commands.main import main

sys.exit(main())
