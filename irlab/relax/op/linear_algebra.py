"""``matmul`` with numpy semantics (1-D operands, broadcast batch dims), legalized to TOPI's
``nn.matmul`` (2-D right operand) or ``nn.batch_matmul`` (3-D), else a generic TE product."""

from __future__ import annotations

from irlab import te, topi
from irlab.errors import DiagnosticError
from irlab.ir.op import OpPattern
from irlab.relax.op.attrs import MatmulAttrs
from irlab.relax.op.common import (broadcast_sinfo, const_int, dims_equal, make_call,
                                   tensor_args)
from irlab.relax.op.registry import register_relax_op
from irlab.relax.struct_info import TensorStructInfo
from irlab.runtime.dtype import normalize_dtype
from irlab.tir import op as tir_op


def _infer(call, bb):
    a, b = tensor_args(call, 2)
    dtype = call.attrs.out_dtype or a.dtype
    if a.is_unknown_ndim or b.is_unknown_ndim:
        return TensorStructInfo(dtype=dtype, ndim=-1)
    if a.ndim == 0 or b.ndim == 0:
        raise DiagnosticError("R.matmul: operands must have at least one dimension", call)
    out_ndim = max(a.ndim, b.ndim) - (a.ndim == 1) - (b.ndim == 1)
    if a.dims is None or b.dims is None:
        return TensorStructInfo(dtype=dtype, ndim=max(a.ndim, b.ndim) if out_ndim else 0)
    da, db = list(a.dims), list(b.dims)
    ka, kb = da[-1], (db[-2] if len(db) > 1 else db[0])
    if not dims_equal(ka, kb):
        if const_int(ka) is not None and const_int(kb) is not None:
            raise DiagnosticError(f"R.matmul: reduction dims differ: {a} @ {b}", call)
    rows = [da[-2]] if len(da) > 1 else []
    cols = [db[-1]] if len(db) > 1 else []
    batch_a, batch_b = da[:-2], db[:-2]
    batch = broadcast_sinfo(call, TensorStructInfo(batch_a, dtype),
                            TensorStructInfo(batch_b, dtype), dtype)
    if batch.dims is None:
        return TensorStructInfo(dtype=dtype, ndim=out_ndim)
    return TensorStructInfo(list(batch.dims) + rows + cols, dtype)


def _batch_index(shape, nbatch, idx):
    """Batch indices of the output mapped onto an operand's batch dims (size 1 repeats)."""
    offset = nbatch - len(shape)
    return [0 if topi.utils.is_const(dim) and int(dim.value) == 1 else idx[d + offset]
            for d, dim in enumerate(shape)]


def _any_matmul(a, b, out_dtype):
    """numpy's matmul in TE: 1-D operands, broadcast batch dims."""
    sa, sb = list(a.shape), list(b.shape)
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    batch_a = () if a_vec else tuple(topi.utils.dims(a))[:-2]
    batch_b = () if b_vec else tuple(topi.utils.dims(b))[:-2]
    batch = topi.broadcast.broadcast_shape(batch_a, batch_b)
    nbatch = len(batch)
    k = te.reduce_axis((0, sa[-1]), name="k")
    out_shape = (*batch, *([] if a_vec else [sa[-2]]), *([] if b_vec else [sb[-1]]))

    def body(*idx):
        bidx, rest = idx[:nbatch], idx[nbatch:]
        lhs = a(k) if a_vec else a(*_batch_index(sa[:-2], nbatch, bidx), rest[0], k)
        rhs = b(k) if b_vec else b(*_batch_index(sb[:-2], nbatch, bidx), k, rest[-1])
        return te.sum(tir_op.cast(lhs, out_dtype) * tir_op.cast(rhs, out_dtype), axis=k)

    return te.compute(out_shape, body, name="T_matmul", tag="matmul")


def _legalize(bb, call):
    a, b = call.args
    sa, sb = a.struct_info, b.struct_info
    out_dtype = call.attrs.out_dtype or sa.dtype
    if sa.ndim >= 2 and sb.ndim == 2:
        return bb.call_te(topi.nn.matmul, a, b, False, False, out_dtype,
                          primfunc_name_hint="matmul")
    if sa.ndim == 3 and sb.ndim == 3:
        return bb.call_te(topi.nn.batch_matmul, a, b, False, False, out_dtype,
                          primfunc_name_hint="matmul")
    return bb.call_te(_any_matmul, a, b, out_dtype, primfunc_name_hint="matmul")


register_relax_op("relax.matmul", _infer, num_inputs=2, attrs_type=MatmulAttrs,
                  pattern=OpPattern.OUT_ELEMWISE_FUSABLE, legalize=_legalize,
                  description="matrix product with numpy semantics")


def matmul(x1, x2, out_dtype=None):
    """``x1 @ x2`` (numpy's matmul); ``out_dtype`` defaults to the operands'."""
    return make_call("relax.matmul", [x1, x2],
                     MatmulAttrs(normalize_dtype(out_dtype) if out_dtype else ""))


def linear(data, weight, bias=None, out_dtype=None):
    """``data @ weight.T + bias`` (PyTorch's Linear), composed of permute_dims, matmul, add."""
    from irlab.relax.op.binary import add
    from irlab.relax.op.manipulate import permute_dims

    out = matmul(data, permute_dims(weight), out_dtype)
    return out if bias is None else add(out, bias)


__all__ = ["matmul", "linear"]
