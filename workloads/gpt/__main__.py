import sys

from workloads.gpt.train import main

sys.exit(main())
