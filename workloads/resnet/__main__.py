import sys

from workloads.resnet.train import main

sys.exit(main())
