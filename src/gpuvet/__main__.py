import sys

from gpuvet.cli import main

sys.exit(main())
