"""Quick tier of the Relay differential fuzzing (issue 20): random graphs (see
``irlab.testing.relay_graphs``) through ``relay.build`` at opt_level 0 and 3 agree with the
Relay interpreter, NaN/inf inputs included (NaN positions compared). Tolerances per family
are those of ``irlab.testing.differential``.
"""

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from irlab.testing.differential import run_relay_graph
from irlab.testing.relay_graphs import relay_graphs

QUICK = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                 suppress_health_check=list(HealthCheck))


@QUICK
@given(relay_graphs(), st.integers(0, 2 ** 16), st.booleans())
def test_relay_build_agrees_with_interpreter(graph, seed, special):
    note(str(graph.mod))
    mismatches = run_relay_graph(graph, seed=seed, special=special)
    assert not mismatches, "\n".join(str(m) for m in mismatches)
