"""``tvm.testing``: helpers for tests (pytest parameters, targets, markers; see ``utils``) and
irlab's differential-testing strategies (``strategies``, ``tir_strategies``, ``check``)."""

from irlab.testing.utils import *  # noqa: F401,F403
from irlab.testing.utils import __all__  # noqa: F401
