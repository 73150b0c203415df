"""ONNX conformance: the node test cases that the installed ``onnx`` package generates
(``onnx.backend.test.case.node``), run through ``from_onnx`` and the Relay interpreter.

A case is *in scope* when every node of its graph has a converter at the case's opset; its
``_expanded`` twin (the op spelled as a function of simpler ops) is in scope on the same terms,
and adds multi-node graphs. ``KNOWN_GAPS`` lists the in-scope cases expected to fail, with why.
Used by ``tests/relay/frontend/test_onnx_conformance.py`` and ``benchmarks/onnx_conformance.py``.
"""

from __future__ import annotations

import warnings

import numpy as np

from irlab.relay.frontend.onnx import from_onnx
from irlab.relay.frontend.onnx_common import ONNX_DTYPES, get_converter
from irlab.relay.frontend.onnx_proto import model_opset


def _names(reason, *names):
    return {f"test_{name}": reason for name in names}


# case name -> why it fails. The test expects each of these to fail, so a fixed gap shows up.
KNOWN_GAPS = {
    **_names("3-D convolutions and pools: Relay here has only 2-D ones (1-D run as 2-D)",
             "averagepool_3d_default", "averagepool_3d_dilations_small",
             "averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_False",
             "averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True",
             "averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_False",
             "averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True",
             "convtranspose_3d", "maxpool_3d_default", "maxpool_3d_dilations",
             "maxpool_3d_dilations_use_ref_impl", "maxpool_3d_dilations_use_ref_impl_large"),
    **_names("training mode: batch statistics and random dropping are not imported "
             "(inference only, as TVM)",
             "batchnorm_epsilon_training_mode", "batchnorm_example_training_mode",
             "training_dropout", "training_dropout_default", "training_dropout_default_mask",
             "training_dropout_mask"),
    **_names("MaxPool's Indices output (argmax positions) has no Relay op",
             "maxpool_with_argmax_2d_precomputed_pads",
             "maxpool_with_argmax_2d_precomputed_strides"),
    **_names("sequence and optional values: only tensors are imported",
             "identity_opt", "identity_sequence"),
    **_names("Mod with fmod=0 on floats: Relay's floor_mod is a - floor(a / b) * b (as TVM), "
             "which gives NaN where ONNX expects numpy's results for infinite operands",
             "mod_float_edge_cases_fmod_0_float16", "mod_float_edge_cases_fmod_0_float32",
             "mod_float_edge_cases_fmod_0_float64"),
    **_names("the max/min of an empty set: Relay's is the lowest/highest finite value "
             "(TVM's min_value), ONNX's is -inf/+inf",
             "reduce_max_empty_set", "reduce_min_empty_set"),
    **_names("Resize with a scale whose product with the input size is not an integer: "
             "Relay's resize2d maps coordinates with the sizes' ratio (as TVM), ONNX with the "
             "scale itself",
             "resize_downsample_scales_cubic", "resize_downsample_scales_cubic_align_corners",
             "resize_downsample_scales_cubic_A_n0p5_exclude_outside",
             "resize_downsample_scales_linear", "resize_downsample_scales_linear_align_corners"),
    **_names("Resize with antialias=1 (a widened filter when downsampling): not in resize2d",
             "resize_downsample_scales_cubic_antialias",
             "resize_downsample_scales_linear_antialias",
             "resize_downsample_sizes_cubic_antialias",
             "resize_downsample_sizes_linear_antialias"),
    **_names("coordinate_transformation_mode half_pixel_symmetric (opset 19) is not in "
             "TVM's resize2d",
             "resize_downsample_scales_linear_half_pixel_symmetric",
             "resize_upsample_scales_linear_half_pixel_symmetric"),
    **_names("float16 attention spelled out in ~30 ops: each Relay op rounds to float16, the "
             "expected values round less often (2 of 192 values differ by 1e-3 relative)",
             "attention_4d_causal_fp16_expanded"),
}

DTYPE_GAP = ("uses an element type irlab lacks (bfloat16, 8/6/4/2-bit floats and ints, "
             "strings): irlab's dtypes are numpy's")


def gap_reason(case):
    """Why ``case`` is expected to fail, or None."""
    if case.name in KNOWN_GAPS:
        return KNOWN_GAPS[case.name]
    return DTYPE_GAP if _uses_missing_dtype(case.model) else None


def _uses_missing_dtype(model) -> bool:
    graph = model.graph
    types = [info.type.tensor_type.elem_type
             for info in list(graph.input) + list(graph.output)
             if info.type.HasField("tensor_type")]
    types += [attr.i for node in graph.node for attr in node.attribute if attr.name == "to"]
    types += [attr.t.data_type for node in graph.node for attr in node.attribute
              if attr.HasField("t")]
    return any(t and t not in ONNX_DTYPES for t in types)


def in_scope(case) -> bool:
    """Whether every node of the case's graph has a converter at its opset."""
    opset = model_opset(case.model)
    return all(node.domain in ("", "ai.onnx") and get_converter(node.op_type, opset)
               for node in case.model.graph.node)


def op_under_test(case) -> str:
    """The op a case is about: the single node's type, or the expanded op's name."""
    nodes = case.model.graph.node
    if len(nodes) == 1:
        return nodes[0].op_type
    return f"{case.name.replace('test_', '').split('_expanded')[0]} (expanded)"


def collect_cases():
    """All generated node cases (name -> case), in scope or not."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators overflow casts on purpose
        cases = collect_testcases()
    return {case.name: case for case in cases}


def run_case(case):
    """Import ``case.model`` and compare the interpreter's outputs with the expected ones
    (``np.testing.assert_allclose`` with the case's tolerances, as ONNX's backend test)."""
    for inputs, expected in case.data_sets:
        inputs, expected = _arrays(inputs), _arrays(expected)
        run, inputs = _import(case.model, inputs)
        with np.errstate(all="ignore"):
            result = run(*inputs)
        outputs = list(result) if isinstance(result, tuple) else [result]
        assert len(outputs) == len(expected), \
            f"{len(outputs)} outputs, expected {len(expected)}"
        for got, want in zip(outputs, expected):
            got, want = got.numpy(), np.asarray(want)
            assert got.dtype == want.dtype, f"dtype {got.dtype}, expected {want.dtype}"
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def _arrays(values):
    """Data-set values as numpy arrays (some generators store TensorProtos)."""
    from onnx import TensorProto, numpy_helper

    return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in values]


def _import(model, inputs):
    """(callable, remaining inputs): graph inputs that the importer needs at import time
    (a Reshape's shape, Slice's starts...) become initializers holding this data set's values,
    which is how a static-shape importer sees such models."""
    from onnx import numpy_helper

    from irlab.errors import FrontendError
    from irlab.relay import create_executor

    names = [info.name for info in model.graph.input]
    bound = {}
    while True:
        try:
            mod, params = from_onnx(model)
            break
        except FrontendError as err:
            name = getattr(err, "graph_input", None)
            if name is None or name in bound:
                raise
        bound[name] = inputs[names.index(name)]
        model = _with_initializer(model, name, bound[name], numpy_helper)
    run = create_executor("debug", mod=mod, params=params).evaluate()
    return run, [x for n, x in zip(names, inputs) if n not in bound]


def _with_initializer(model, name, value, numpy_helper):
    copy = type(model)()
    copy.CopyFrom(model)
    kept = [info for info in copy.graph.input if info.name != name]
    del copy.graph.input[:]
    copy.graph.input.extend(kept)
    copy.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    return copy


def run_all(names=None):
    """{case name: None (passed) or the failure message} for the in-scope cases."""
    cases = collect_cases()
    results = {}
    for name, case in cases.items():
        if names is not None and name not in names or not in_scope(case):
            continue
        try:
            run_case(case)
            results[name] = None
        except Exception as err:  # noqa: BLE001 - a conformance run reports every failure
            results[name] = f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
    return results
