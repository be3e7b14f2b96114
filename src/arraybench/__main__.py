import sys

from arraybench.cli import main

sys.exit(main())
