"""`python3 -m bbrlab.guest RUN_DIR`: the experiment inside the testbed (driver.py).

The UML guest's init (guest_init.c) and the native backend start the guest this way; the
exit status is the driver's (0 on success, anything else is a failed run)."""
import sys

from .driver import main

sys.exit(main(sys.argv[1]))
