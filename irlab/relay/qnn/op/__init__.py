"""``relay.qnn.op``: integer operators carrying their scales and zero points as arguments."""

from irlab.relay.qnn.op.qnn import (add, conv2d, dense, dequantize, mul, quantize,
                                    requantize, RequantizeAttrs, QuantizeAttrs,
                                    DequantizeAttrs)

__all__ = ["add", "conv2d", "dense", "dequantize", "mul", "quantize", "requantize",
           "RequantizeAttrs", "QuantizeAttrs", "DequantizeAttrs"]
