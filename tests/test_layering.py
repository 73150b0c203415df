"""irlab's subpackages as layers (ARCHITECTURE.md): a lower layer never imports a higher one,
lazily or not.

The import graph is read with ``ast`` from every ``import`` statement, function-level ones
included. Upward imports that exist today are listed in ``KNOWN_UPWARD`` (issue 14 removes
them); the test fails when a new one appears, and when a listed one is gone (so the list
only shrinks); likewise for groups of one layer's units that import each other. Run this file directly to print the current upward imports.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Layer of each unit (a subpackage of irlab, or a top-level module), from ARCHITECTURE.md:
# errors, runtime -> ir + pass infra -> arith, tir, te, script -> target, build_module -> topi
# -> relay (relax) -> contrib, viz, testing -> widgets -> cli (ARCHITECTURE.md puts cli beside
# viz, but ``irlab report`` writes the explorer's HTML). Units of one layer may import each
# other (the list below still names the ones that form cycles).
LAYERS = [
    ("errors", "error"),
    ("runtime",),
    ("ir", "transform", "instrument"),
    ("tir",),  # TIR's nodes: expr, stmt, buffer, function, functor, op
    ("arith",),  # the simplifier over TIR's nodes
    ("te", "script"),
    ("tir.analysis",),
    ("tir.transform", "tir.schedule"),  # TIR's passes and schedules use arith
    ("target", "build_module", "codegen"),
    ("topi",),
    ("relay", "relax"),
    ("meta_schedule",),
    ("contrib", "viz", "testing", "nd", "parser"),
    ("widgets",),
    ("cli",),  # the command line exports the widgets' HTML report: it sits on top
]
LAYER = {unit: level for level, units in enumerate(LAYERS) for unit in units}

# (importing unit, imported unit): upward imports present today. Remove an entry when its
# import is gone; never add one.
KNOWN_UPWARD: set = set()
# Units of one layer that import each other. Never add a group.
KNOWN_CYCLES: list = []


# Subpackages of tir that are units of their own: they sit above arith, which works on
# TIR's nodes (ARCHITECTURE.md puts arith and tir in one layer; split, they form no cycle).
TIR_PARTS = ("analysis", "transform", "schedule")


def _unit_of(path: Path) -> str | None:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] == "widgets":
        return "widgets"
    if parts[0] != "irlab" or parts[1:] in (("__init__",), ("tir", "__init__")):
        # irlab/__init__.py and tir/__init__.py are public faces (``tvm.tir`` holds the
        # schedule and the passes too): they may import every layer below their users
        return None
    if parts[1] == "tir" and len(parts) > 3 and parts[2] in TIR_PARTS:
        return f"tir.{parts[2]}"
    return parts[1]


def _unit_of_module(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "irlab" or len(parts) < 2:
        return None
    if parts[1] == "tir" and len(parts) > 2 and parts[2] in TIR_PARTS:
        return f"tir.{parts[2]}"
    return parts[1]


def _imported_units(path: Path, tree: ast.AST):
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names = [module] if node.module else [f"{module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            unit = _unit_of_module(name)
            if unit is not None:
                yield unit, node.lineno


def import_graph():
    """{(unit, imported unit): [file:line, ...]} over irlab/ and widgets/."""
    edges = collections.defaultdict(list)
    for path in sorted([*ROOT.glob("irlab/**/*.py"), *ROOT.glob("widgets/**/*.py")]):
        unit = _unit_of(path)
        if unit is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, line in _imported_units(path, tree):
            if target != unit:
                edges[unit, target].append(f"{path.relative_to(ROOT)}:{line}")
    return edges


def upward_imports():
    return {edge: where for edge, where in import_graph().items()
            if LAYER.get(edge[1], 0) > LAYER.get(edge[0], 0)}


def test_every_unit_has_a_layer():
    units = {unit for edge in import_graph() for unit in edge}
    assert units <= set(LAYER), f"give these a layer in LAYERS: {sorted(units - set(LAYER))}"


def test_no_new_upward_import():
    new = {edge: where for edge, where in upward_imports().items() if edge not in KNOWN_UPWARD}
    assert not new, "lower layer imports a higher one (go through the registry or a hook):\n" + \
        "\n".join(f"{a} -> {b}: {', '.join(where[:3])}" for (a, b), where in sorted(new.items()))


def cycles(edges):
    """Groups of more than one unit that import each other (strongly connected components)."""
    succ = collections.defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    reach = {u: _reachable(u, succ) for u in list(succ)}
    groups = {frozenset(v for v in reach[u] if u in reach.get(v, ())) | {u} for u in reach}
    return [set(g) for g in groups if len(g) > 1]


def _reachable(start, succ):
    seen, stack = set(), [start]
    while stack:
        for nxt in succ[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def test_no_new_cycle():
    edges = [edge for edge in import_graph() if edge not in KNOWN_UPWARD]
    new = [group for group in cycles(edges) if not any(group <= known for known in KNOWN_CYCLES)]
    assert not new, f"units importing each other: {new}"


def test_known_upward_list_is_current():
    gone = KNOWN_UPWARD - set(upward_imports())
    assert not gone, f"these upward imports are gone: remove them from KNOWN_UPWARD: {gone}"


if __name__ == "__main__":
    for (a, b), where in sorted(upward_imports().items()):
        print(f"{a} -> {b} ({len(where)}): {', '.join(where[:4])}")
    print("cycles among the rest:", cycles([e for e in import_graph() if e not in KNOWN_UPWARD]))
    print("cycles in all:", cycles(list(import_graph())))


def test_import_irlab_does_not_load_llvm():
    """``import irlab`` works without llvmlite (the IR, the passes and the explorer need no
    LLVM; building for "llvm" does): schedules read the codegen's facts from
    ``irlab.target.llvm_contract``, not from ``codegen_llvm``."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['llvmlite'] = None; import irlab; "
            "assert 'irlab.target.codegen_llvm' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-2000:]
