"""Matrix products in TE: ``dense`` (``data @ weight.T``), ``matmul`` (optional transposes),
``batch_matmul`` (3-D, broadcast batch), and the CPU variants whose second operand is first
packed into column panels ``packed[..., jo, k, ji]`` of ``bn`` columns (TVM's ``dense_pack``):
the inner loop of the schedule then reads ``bn`` contiguous floats per ``k``.

Every product stage is named ``T_<op>`` (its packing stage ``T_<op>_pack``) and tagged with
the op name, so a schedule finds it from the fused function's outputs.
"""

from __future__ import annotations

from irlab import te
from irlab.tir import op as O
from irlab.topi.utils import const_shape, dims, is_const


def _acc(value, out_dtype):
    return value if value.dtype == out_dtype else O.cast(value, out_dtype)


def _operand_b(b, transpose_b, batch_b):
    """``(batch index tuple, k, j) -> B element`` for a (batch..., K, N) or (batch..., N, K)."""
    if transpose_b:
        return lambda bi, k, j: b(*bi, j, k)
    return lambda bi, k, j: b(*bi, k, j)


def _is_one(dim) -> bool:
    return is_const(dim) and dim == 1


def _batch(x, y):
    """The broadcast of two batch dims (a constant 1 repeats; symbolic dims are taken equal)."""
    if is_const(x) and is_const(y):
        return max(x, y)
    return y if _is_one(x) else x


def _layout_free(b, batched):
    """``b`` as the layout-free operand (TVM's ``layout_free_placeholders``): a weight, a
    constant at build time, may be laid out anew by MetaSchedule's ``RewriteLayout``.
    A batched product's ``b`` is an activation, not a weight."""
    return None if batched else {"layout_free_placeholders": [b]}


def _product(a, b, transpose_a, transpose_b, out_dtype, name, batched, bn=None):
    sa, sb = dims(a), dims(b)
    out_dtype = out_dtype or a.dtype
    K = sa[-2] if transpose_a else sa[-1]
    N = sb[-2] if transpose_b else sb[-1]
    k = te.reduce_axis((0, K), name="k")
    b_elem = _operand_b(b, transpose_b, batched)

    def b_index(batch):
        if not batched:
            return ()
        return (batch[0] if not _is_one(sb[0]) else 0,)

    def a_elem(idx, kk):
        # idx: the output indices without j
        if batched:
            bi = idx[0] if not _is_one(sa[0]) else 0
            i = idx[1]
            return a(bi, kk, i) if transpose_a else a(bi, i, kk)
        if transpose_a:
            return a(*idx[:-1], kk, idx[-1])
        return a(*idx, kk)

    if batched:
        out_shape = (_batch(sa[0], sb[0]), sa[-1] if transpose_a else sa[-2], N)
    elif transpose_a:
        out_shape = (*sa[:-2], sa[-1], N)
    else:
        out_shape = (*sa[:-1], N)
    if bn is None:
        def body(*idx):
            j = idx[-1]
            bi = b_index(idx[:1]) if batched else ()
            return te.sum(_acc(a_elem(idx[:-1], k), out_dtype)
                          * _acc(b_elem(bi, k, j), out_dtype), axis=k)

        return te.compute(out_shape, body, name=f"T_{name}", tag=name,
                          attrs=_layout_free(b, batched))
    # packed: panels of bn columns of B, contiguous along j
    if batched:
        pack_shape = (sb[0], N // bn, K, bn)
        packed = te.compute(pack_shape, lambda bb_, jo, kk, ji: b_elem((bb_,), kk, jo * bn + ji),
                            name=f"T_{name}_pack", tag=f"{name}_pack")
    else:
        pack_shape = (N // bn, K, bn)
        packed = te.compute(pack_shape, lambda jo, kk, ji: b_elem((), kk, jo * bn + ji),
                            name=f"T_{name}_pack", tag=f"{name}_pack")

    def pbody(*idx):
        j = idx[-1]
        bi = b_index(idx[:1]) if batched else ()
        return te.sum(_acc(a_elem(idx[:-1], k), out_dtype)
                      * _acc(packed(*bi, j // bn, k, j % bn), out_dtype), axis=k)

    return te.compute(out_shape, pbody, name=f"T_{name}", tag=name,
                      attrs=_layout_free(b, batched))


def dense(data, weight, out_dtype=None, bn=None):
    """``out[..., j] = sum_k data[..., k] * weight[j, k]``; ``bn``: pack the weight in panels."""
    return _product(data, weight, False, True, out_dtype, "dense", False, bn)


def dense_pack(data, weight, out_dtype=None):
    """``dense`` with the weight given packed: ``weight[j // n, k, j % n]`` (shape
    ``(N // n, K, n)``, layout ``NC{n}n``), as ``dense(..., bn=n)`` packs it on every call. The
    stage is named and tagged like ``dense``'s product, so its schedules find it."""
    sd, sw = const_shape(data), const_shape(weight)
    out_dtype = out_dtype or data.dtype
    blocks, K, bn = sw
    k = te.reduce_axis((0, K), name="k")

    def body(*idx):
        j = idx[-1]
        return te.sum(_acc(data(*idx[:-1], k), out_dtype)
                      * _acc(weight(j // bn, k, j % bn), out_dtype), axis=k)

    return te.compute((*sd[:-1], blocks * bn), body, name="T_dense", tag="dense",
                      attrs={"layout_free_placeholders": [weight]})


def matmul(a, b, transpose_a=False, transpose_b=False, out_dtype=None, bn=None):
    """``op(a) @ op(b)`` with ``a`` N-D (the last two axes transposed if ``transpose_a``) and
    ``b`` 2-D."""
    return _product(a, b, bool(transpose_a), bool(transpose_b), out_dtype, "matmul", False, bn)


def batch_matmul(x, y, transpose_a=False, transpose_b=True, out_dtype=None, bn=None):
    """Batched ``op(x) @ op(y)`` of 3-D tensors; a batch of 1 broadcasts."""
    return _product(x, y, bool(transpose_a), bool(transpose_b), out_dtype, "batch_matmul",
                    True, bn)


def bias_add(data, bias, axis=1):
    """``data + bias`` with ``bias`` along ``axis``."""
    ndim = len(data.shape)
    axis = axis % ndim
    return te.compute(data.shape, lambda *i: data(*i) + bias(i[axis]), name="T_bias_add",
                      tag="broadcast")


__all__ = ["dense", "dense_pack", "matmul", "batch_matmul", "bias_add"]
