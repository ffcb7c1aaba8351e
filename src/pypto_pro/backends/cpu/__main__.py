"""``python -m pypto_pro.backends.cpu``: build the install-wide artifacts of the cpu backend now (the runtime
library and the precompiled tile header, see :mod:`.prebuilt`); ``make venv`` runs it after installing."""
import sys

from .prebuilt import main

sys.exit(main())
