"""Every Relay op irlab registers is defined in one place with everything the compiler asks of
it: attrs type, type relation, fusion pattern, numpy reference, TE compute and strategy, and
a layout rule -- each given, or declared ``NOT_APPLICABLE`` in the op's definition. Passes read
these from the op (``op.get_attr``); they keep no lists of op names."""

import ast
import pathlib

import pytest

import irlab  # noqa: F401 - registers the ops
from irlab.ir.attrs import Attrs
from irlab.ir.op import NOT_APPLICABLE, Op, OpPattern
from irlab.relay.op.scale_axis import ScaleAxisRule

ROOT = pathlib.Path(irlab.__file__).parent


def _irlab_ops():
    """The Relay ops irlab defines, in ``irlab/relay/op/`` (tests and notebooks register more;
    Relax ops share the registry with rules of their own)."""
    return [Op.get(name) for name in Op.list_op_names()
            if Op.get(name).defined_in.startswith("irlab.relay.op.")
            and Op.get(name).defined_in != "irlab.relay.op.op"]


def _given_or_not_applicable(op, key):
    if not op.has_attr(key):
        return f"{key} (neither given nor NOT_APPLICABLE)"
    value = op.get_attr(key)  # None when declared NOT_APPLICABLE
    return None if value is None or callable(value) else f"{key} (not callable)"


def _lacks(op) -> list:
    """What ``op`` lacks, as readable strings (empty when complete)."""
    lacks = []
    if op.attrs_type is not None and not issubclass(op.attrs_type, Attrs):
        lacks.append("attrs type (not an Attrs class)")
    if op.num_inputs >= 0 and len(op.arguments) != op.num_inputs:
        lacks.append(f"arguments ({len(op.arguments)} declared for {op.num_inputs} inputs)")
    if not op.description:
        lacks.append("description")
    if not callable(op.type_rel):
        lacks.append("type relation")
    if not isinstance(op.get_attr("TOpPattern"), OpPattern):
        lacks.append("TOpPattern")
    if not callable(op.get_attr("FReference")):
        lacks.append("FReference (numpy reference)")
    for key in ("FTVMCompute", "FTVMStrategy", "FInferCorrectLayout"):
        problem = _given_or_not_applicable(op, key)
        if problem:
            lacks.append(problem)
    rule = op.get_attr("TScaleAxisRule")
    if rule is not None and not isinstance(rule, ScaleAxisRule):
        lacks.append("TScaleAxisRule (not a ScaleAxisRule)")
    if rule is ScaleAxisRule.WEIGHT and not callable(op.get_attr("FScaleAxisChannels")):
        lacks.append("FScaleAxisChannels (a WEIGHT op must say its channel axes)")
    return lacks


def test_every_op_is_complete():
    ops = _irlab_ops()
    assert len(ops) > 100
    missing = {op.name: _lacks(op) for op in ops if _lacks(op)}
    report = "\n".join(f"  {name} ({Op.get(name).defined_in}): {', '.join(lacks)}"
                       for name, lacks in sorted(missing.items()))
    assert not missing, f"{len(missing)} ops lack attributes:\n{report}"


@pytest.fixture
def bare_op():
    """An op registered with nothing known, removed afterwards (other tests walk the whole
    registry)."""
    from irlab.ir import op as op_registry
    from irlab.relay.op import op as _op

    name = "test_definitions.bare"
    yield _op.register(name, "nothing known yet")
    op_registry._REGISTRY.pop(name)
    op_registry._ENTRIES.pop(name)


def test_the_check_names_what_an_op_lacks(bare_op):
    op = bare_op
    assert op.defined_in == __name__  # user ops are not irlab's: the walk skips them
    lacks = _lacks(op)
    assert "type relation" in lacks and "FReference (numpy reference)" in lacks
    assert "FInferCorrectLayout (neither given nor NOT_APPLICABLE)" in lacks
    op.set_attrs(FInferCorrectLayout=NOT_APPLICABLE)
    assert op.get_attr("FInferCorrectLayout") is None  # passes read it as "no rule"
    assert "FInferCorrectLayout (neither given nor NOT_APPLICABLE)" not in _lacks(op)


def test_ops_are_defined_in_their_family_module():
    assert Op.get("nn.conv2d").defined_in == "irlab.relay.op.nn.conv"
    assert Op.get("add").defined_in == "irlab.relay.op.tensor"
    assert Op.get("nn.conv2d").get_attr("FCombineParallel") is not None
    assert Op.get("nn.relu").get_attr("TScaleAxisRule") is ScaleAxisRule.POSITIVE_HOMOGENEOUS


# Passes that rewrite one named op by purpose (TVM names them too) are fine: CanonicalizeOps
# turns nn.bias_add into add, FuseOps stops at stop_fusion, partitioning reads its own
# annotations, SimplifyExpr's rules are patterns over the ops they rewrite, CombineParallel<Op>
# is about <Op>. A table of op facts is not: a module-level dict/set/tuple/list of op names, or
# a test ``name in ("add", "multiply")``.
def _op_name_collection(node) -> bool:
    """A literal collection (or frozenset of one) of at least two strings, all op names."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "frozenset" and node.args:
        node = node.args[0]
    if isinstance(node, ast.Dict):
        items = node.keys
    elif isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        items = node.elts
    else:
        return False
    names = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    registered = set(Op.list_op_names())
    return len(names) >= 2 and len(names) == len(items) and set(names) <= registered


def _name_tables(tree):
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                and _op_name_collection(node.value):
            yield node.lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(o, (ast.In, ast.NotIn))
                                                 for o in node.ops) \
                and any(_op_name_collection(c) for c in node.comparators):
            yield node.lineno


@pytest.mark.parametrize("folder", ["relay/transform", "relay/backend"])
def test_passes_keep_no_op_name_tables(folder):
    offenders = [f"{path.relative_to(ROOT)}:{line}"
                 for path in sorted((ROOT / folder).glob("*.py"))
                 for line in _name_tables(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offenders, "op-name tables in passes:\n" + "\n".join(offenders)


def test_the_table_check_finds_a_table():
    tree = ast.parse('UNARY = ("exp", "log")\nOK = ("exp", "not an op")\n'
                     'def f(call):\n    return call.op.name in {"add", "multiply"}\n')
    assert list(_name_tables(tree)) == [1, 4]
