"""``relay.ext.dnnl``: each partitioned function becomes a C function calling oneDNN's C API
(TVM's DNNL codegen), compiled and linked against ``libdnnl``.

Every operator call is one *call site*: a static ``irlab_dnnl_op`` whose primitive is made
on the first call (convolution and inner product choose their own blocked layouts; the
helpers in ``support_c`` reorder the caller's NCHW arrays in and out, and reorder constant
weights once). Composite regions (``dnnl.conv2d_bias_relu`` ...) become one primitive with
the bias and a fused ReLU post-op. Large constants are embedded as binary data, not printed
(``binary_constants``). Calls of one library are serialized (call sites keep state)."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.relay.backend.contrib.binary_constants import embedded_array
from irlab.relay.backend.contrib.codegen_c import (CodegenC, CSourceModuleCodegenBase, Output,
                                                   c_type)
from irlab.relay.backend.contrib.dnnl import library as dnnl_library
from irlab.relay.backend.contrib.dnnl.support_c import SUPPORT_C
from irlab.relay.op.contrib.dnnl import split_composite

# constants with at least this many elements are embedded as bytes rather than printed
EMBED_MIN_ELEMENTS = 64

_POOLS = {"nn.max_pool2d": "dnnl_pooling_max", "nn.global_max_pool2d": "dnnl_pooling_max",
          "nn.avg_pool2d": "dnnl_pooling_avg_exclude_padding",
          "nn.global_avg_pool2d": "dnnl_pooling_avg_exclude_padding"}


def c_dims(values) -> str:
    """A C99 compound literal ``(const int64_t[]){...}`` of ``values``."""
    return "(const int64_t[]){" + ", ".join(str(int(v)) for v in values) + "}"


def pad4(padding) -> tuple:
    """Relay's 1, 2 or 4 padding values as (top, left, bottom, right)."""
    p = [int(v) for v in padding]
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    return tuple(p)


def pool_geometry(attrs, in_shape, out_shape) -> dict:
    """Kernel, strides, oneDNN dilation (Relay's minus 1) and paddings of a 2-D pooling;
    ``ceil_mode`` becomes extra right padding, so that oneDNN's output size is Relay's."""
    if attrs is None or not hasattr(attrs, "pool_size"):  # global pooling
        return {"kernel": in_shape[2:], "strides": (1, 1), "dilates": (0, 0),
                "pad_l": (0, 0), "pad_r": (0, 0)}
    top, left, bottom, right = pad4(attrs.padding)
    kernel, strides = tuple(int(k) for k in attrs.pool_size), tuple(int(s) for s in
                                                                    attrs.strides)
    dilation = tuple(int(d) for d in attrs.dilation)
    pad_r = []
    for axis, (low, high) in enumerate(((top, bottom), (left, right))):
        extent = (kernel[axis] - 1) * dilation[axis] + 1
        need = (out_shape[2 + axis] - 1) * strides[axis] + extent - in_shape[2 + axis] - low
        pad_r.append(max(high, need))
    return {"kernel": kernel, "strides": strides, "dilates": tuple(d - 1 for d in dilation),
            "pad_l": (top, left), "pad_r": tuple(pad_r)}


class DnnlCodegen(CodegenC):
    """One partitioned function -> C calling oneDNN primitives."""

    HEADERS = CodegenC.HEADERS + ("pthread.h", "oneapi/dnnl/dnnl.h")

    def __init__(self, symbol: str, compiler: str = "dnnl"):
        super().__init__(symbol, compiler)
        self.constant_names: set = set()
        self._ready = False

    # -- values --------------------------------------------------------------------------
    def visit_constant(self, const):
        outs = super().visit_constant(const) if const.data.numpy().size < EMBED_MIN_ELEMENTS \
            else self._embed(const)
        self.constant_names.add(outs[0].name)
        return outs

    def _embed(self, const):
        ty = const.checked_type
        name = self.fresh(f"{self.symbol}_const")
        self.globals.append(embedded_array(name, c_type(ty.dtype), const.data.numpy()))
        return [Output(name, ty.dtype, tuple(int(d) for d in ty.shape))]

    # -- operators -----------------------------------------------------------------------
    def emit_op(self, call, inputs):
        name = call.op.name
        if name == "nn.conv2d":
            return self.emit_conv2d(call, inputs[0], inputs[1], None, False)
        if name == "nn.dense":
            return self.emit_dense(call, inputs[0], inputs[1], None, False)
        if name == "nn.relu":
            return self.emit_relu(call, inputs[0])
        if name == "add":
            return self.emit_add(call, *inputs)
        if name in _POOLS:
            return self.emit_pool(call, inputs[0])
        raise IrlabError(f"dnnl codegen does not support operator {name} in {self.symbol} "
                         f"(supported: nn.conv2d, nn.dense, nn.relu, add, "
                         f"{', '.join(_POOLS)} and the dnnl.* composites)")

    def emit_composite(self, call, inputs):
        name = str(call.op.attrs["Composite"])
        if not name.startswith(("dnnl.conv2d", "dnnl.dense")):
            return super().emit_composite(call, inputs)
        for param, value in zip(call.op.params, inputs):
            self.memo_map[param] = [value]
        main, bias, relu = split_composite(call.op.body)
        data, weight = (self.visit(a)[0] for a in main.args)
        bias = self.visit(bias)[0] if bias is not None else None
        emit = self.emit_conv2d if name.startswith("dnnl.conv2d") else self.emit_dense
        return [emit(call, data, weight, bias, relu, main)]

    def emit_conv2d(self, call, data, weight, bias, relu, conv=None):
        conv = conv if conv is not None else call
        attrs = conv.attrs
        groups = int(attrs.groups)
        wei = weight.shape if groups == 1 else (groups, weight.shape[0] // groups,
                                                *weight.shape[1:])
        top, left, bottom, right = pad4(attrs.padding)
        out = self.new_buffer(call.checked_type)
        make = (f"irlab_dnnl_conv(&{{op}}, {c_dims(data.shape)}, {len(wei)}, {c_dims(wei)}, "
                f"{c_dims([bias.size]) if bias else 'NULL'}, {c_dims(out.shape)}, "
                f"{c_dims(attrs.strides)}, {c_dims(int(d) - 1 for d in attrs.dilation)}, "
                f"{c_dims((top, left))}, {c_dims((bottom, right))}, {int(relu)}, "
                f"{int(weight.name in self.constant_names)})")
        what = "conv2d" + ("+bias" if bias else "") + ("+relu" if relu else "")
        args = [data, weight] + ([bias] if bias else []) + [out]
        self.call_site(what, make, args, f"{data.shape} * {weight.shape}")
        return out

    def emit_dense(self, call, data, weight, bias, relu, dense=None):
        out = self.new_buffer(call.checked_type)
        make = (f"irlab_dnnl_dense(&{{op}}, {c_dims(data.shape)}, {c_dims(weight.shape)}, "
                f"{c_dims([bias.size]) if bias else 'NULL'}, {c_dims(out.shape)}, "
                f"{int(relu)}, {int(weight.name in self.constant_names)})")
        what = "dense" + ("+bias" if bias else "") + ("+relu" if relu else "")
        args = [data, weight] + ([bias] if bias else []) + [out]
        self.call_site(what, make, args, f"{data.shape} * {weight.shape}")
        return out

    def emit_relu(self, call, data):
        out = self.new_buffer(call.checked_type)
        make = f"irlab_dnnl_relu(&{{op}}, {len(out.shape)}, {c_dims(out.shape)})"
        self.call_site("relu", make, [data, out], f"{out.shape}")
        return out

    def emit_add(self, call, lhs, rhs):
        out = self.new_buffer(call.checked_type)
        if tuple(lhs.shape) != tuple(out.shape):
            lhs, rhs = rhs, lhs  # oneDNN broadcasts its second operand only
        ndims = len(out.shape)
        rhs_dims = (1,) * (ndims - len(rhs.shape)) + tuple(rhs.shape)
        make = f"irlab_dnnl_add(&{{op}}, {ndims}, {c_dims(out.shape)}, {c_dims(rhs_dims)})"
        self.call_site("add", make, [lhs, rhs, out], f"{lhs.shape} + {rhs.shape}")
        return out

    def emit_pool(self, call, data):
        out = self.new_buffer(call.checked_type)
        alg = _POOLS[call.op.name]
        attrs = call.attrs
        if alg.startswith("dnnl_pooling_avg") and getattr(attrs, "count_include_pad", False):
            alg = "dnnl_pooling_avg_include_padding"
        g = pool_geometry(attrs, data.shape, out.shape)
        make = (f"irlab_dnnl_pool(&{{op}}, {alg}, {c_dims(data.shape)}, {c_dims(out.shape)}, "
                f"{c_dims(g['kernel'])}, {c_dims(g['strides'])}, {c_dims(g['dilates'])}, "
                f"{c_dims(g['pad_l'])}, {c_dims(g['pad_r'])})")
        self.call_site(call.op.name, make, [data, out], f"{data.shape} -> {out.shape}")
        return out

    # -- call sites ----------------------------------------------------------------------
    def call_site(self, what: str, make: str, args: list, shapes: str):
        """A static ``irlab_dnnl_op`` made by ``make`` (``{op}`` names it) on the first call,
        then run on ``args``; a failure returns a status naming ``what``."""
        if not self._ready:
            self.messages.append(f"{self.symbol}: oneDNN's CPU engine could not be created")
            self.body.append(f"if (status == 0 && !irlab_dnnl_ready()) "
                             f"status = {len(self.messages)};")
            self._ready = True
        op = self.fresh(f"{self.symbol}_{what.split('+')[0].replace('nn.', '')}")
        self.globals.append(f"static irlab_dnnl_op {op};  /* {what}: {shapes} */")
        self.messages.append(f"{self.symbol}: oneDNN could not make {what} for {shapes}")
        code = len(self.messages)
        make = make.replace("{op}", op)
        self.body.append(f"if (status == 0 && !{op}.prim && !{make})\n"
                         f"    status = {code};")
        self.messages.append(f"{self.symbol}: oneDNN failed running {what} for {shapes}")
        data = ", ".join(f"(void*){a.name}" for a in args)
        self.body.append(f"if (status == 0 && !irlab_dnnl_run(&{op}, (void*[]){{{data}}}))\n"
                         f"    status = {code + 1};")

    def entry_body(self, call: str) -> list:
        return ["  pthread_mutex_lock(&irlab_dnnl_lock);",
                f"  int32_t status = {call};",
                "  pthread_mutex_unlock(&irlab_dnnl_lock);",
                "  return status;"]


class DnnlModuleCodegen(CSourceModuleCodegenBase):
    """The ``dnnl`` external codegen: a ``CSourceModule`` linked against oneDNN."""

    compiler = "dnnl"
    codegen_class = DnnlCodegen

    def support_code(self) -> str:
        return SUPPORT_C

    def compile_options(self) -> tuple:
        library = dnnl_library.find_dnnl()
        if library is None:
            raise IrlabError(f"relay.ext.dnnl needs oneDNN: {dnnl_library.missing_reason()}")
        return library.compile_options()


DnnlModuleCodegen.register(override=False)

__all__ = ["DnnlCodegen", "DnnlModuleCodegen", "pool_geometry", "pad4",
           "EMBED_MIN_ELEMENTS"]
