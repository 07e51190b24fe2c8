import sys

from analysis.workload.train import main

sys.exit(main())
