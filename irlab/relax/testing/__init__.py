"""Testing helpers for Relax (``tvm.relax.testing``)."""

from irlab.relax.testing.evaluator import evaluate, Evaluator
from irlab.relax.testing import relay_translator
