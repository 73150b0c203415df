"""Quantized (QNN) operators: ``relay.qnn.op.quantize``, ``requantize``, ``add``, ``dense``..."""

from irlab.relay.qnn import op

__all__ = ["op"]
