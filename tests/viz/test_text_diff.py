"""Text diffs of big printed programs (issue 21): renumbering ignored, a regular 5,000-line
program is a few distinct lines, which made difflib's exact matcher take minutes."""

from irlab.viz.text_diff import MATCH_BUDGET, _match_cost, diff_lines, normalize_line


def _program(ops):
    return "\n".join(f"  %{i} = {op}(%{max(0, i - 1)}, %{max(0, i - 2)});"
                     for i, op in enumerate(ops))


def _covers(rows, before, after):
    """The rows list every line of both programs once, in order."""
    left = [r.left_no for r in rows if r.left_no]
    right = [r.right_no for r in rows if r.right_no]
    return left == list(range(1, len(before.splitlines()) + 1)) and \
        right == list(range(1, len(after.splitlines()) + 1))


def test_one_line_inserted_in_a_regular_5000_line_program():
    ops = ["add", "multiply", "subtract", "maximum"] * 1250
    before = _program(ops)
    after = _program(ops[:2500] + ["negative"] + ops[2500:])  # every later name shifts
    norm = [normalize_line(x) for x in before.splitlines()]
    assert _match_cost(norm, norm) > MATCH_BUDGET  # the exact matcher would be quadratic
    rows = diff_lines(before, after)
    assert _covers(rows, before, after)
    changed = [r for r in rows if r.tag != "equal"]
    assert len(changed) == 1 and changed[0].tag == "insert" and "negative" in changed[0].right


def test_a_rewritten_regular_program_is_diffed_quickly_and_completely():
    before = _program(["add", "multiply"] * 2500)
    after = _program(["subtract", "relu", "add"] * 800)
    rows = diff_lines(before, after)
    assert _covers(rows, before, after)
    assert any(r.tag != "equal" for r in rows)


def test_small_programs_keep_the_exact_diff():
    before = _program(["add", "multiply", "add", "relu"])
    after = _program(["add", "add", "relu"])
    rows = diff_lines(before, after)
    assert _covers(rows, before, after)
    assert [r.tag for r in rows] == ["equal", "delete", "equal", "equal"]


def test_five_changes_spread_over_a_regular_5000_line_program_show_as_five_rows():
    ops = ["add", "multiply", "subtract", "maximum"] * 1250
    new = list(ops)
    for i in (7, 1200, 2500, 3801, 4990):
        new[i] = "minimum"
    del new[3000]  # a deletion too: every later name shifts
    before, after = _program(ops), _program(new)
    rows = diff_lines(before, after)
    assert _covers(rows, before, after)
    changed = [r for r in rows if r.tag != "equal"]
    assert len(changed) == 6
    assert sum(r.tag == "delete" for r in changed) == 1


def test_edit_script_is_a_shortest_one():
    """The Myers matcher: random small sequences, edits equal to lengths minus 2 * LCS."""
    import random
    from irlab.viz.text_diff import _edit_frontiers, _edit_steps, _steps_to_opcodes
    rng = random.Random(0)
    for _ in range(300):
        a = [rng.randrange(3) for _ in range(rng.randrange(10))]
        b = [rng.randrange(3) for _ in range(rng.randrange(10))]
        ops = _steps_to_opcodes(_edit_steps(a, b, _edit_frontiers(a, b, len(a) + len(b))))
        rebuilt = [x for tag, i1, i2, j1, j2 in ops
                   for x in (a[i1:i2] if tag == "equal" else b[j1:j2])]
        assert rebuilt == b
        lcs = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                lcs[i + 1][j + 1] = lcs[i][j] + 1 if x == y else max(lcs[i][j + 1],
                                                                   lcs[i + 1][j])
        edits = sum(i2 - i1 + j2 - j1 for tag, i1, i2, j1, j2 in ops if tag != "equal")
        assert edits == len(a) + len(b) - 2 * lcs[-1][-1]


def test_a_pass_that_removes_1500_spread_lines_shows_only_deletions():
    """As EliminateCommonSubexpr on the 5,000-node graph: many lines go, the rest stay."""
    ops = ["add", "multiply", "subtract", "maximum", "minimum"] * 1000
    kept = [op for i, op in enumerate(ops) if i % 10 not in (3, 4, 7)]
    before, after = _program(ops), _program(kept)
    rows = diff_lines(before, after)
    assert _covers(rows, before, after)
    assert sum(r.tag == "delete" for r in rows) == 1500
    assert all(r.tag in ("equal", "delete") for r in rows)
