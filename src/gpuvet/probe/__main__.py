"""``python3 -m gpuvet.probe``: print this machine's snapshot JSON (stdlib only, Python 3.6+)."""

import sys

from gpuvet.probe.collect import main

sys.exit(main())
