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
