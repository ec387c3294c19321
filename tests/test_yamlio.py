import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from benchcat import yamlio

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**18), 10**18),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
docs = st.recursive(
    scalars,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=8), c, max_size=4)),
    max_leaves=20,
)


@settings(deadline=None)  # behaviour, not speed: no per-example time limit on a busy machine
@given(st.dictionaries(st.text(max_size=10), docs, min_size=1, max_size=5))
def test_round_trip_through_the_safe_loader(doc):
    assert yamlio.loads(yamlio.dumps(doc)) == doc
    assert yaml.safe_load(yamlio.dumps(doc)) == doc  # the pure-Python loader agrees


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "No",
        "on",
        "null",
        "~",
        "1e5",
        "0x1f",
        "1:20",
        "- a",
        "a: b",
        "#c",
        "",
        " a",
        "a ",
        "<script>alert(1)</script>",
        "\u2028",
        "\x85",
        "\x7f",
        "\ufeff",
    ],
)
def test_tricky_strings_stay_strings(text):
    assert yamlio.loads(yamlio.dumps({"k": text})) == {"k": text}


def test_floats_keep_type_and_value():
    for x in (1e-05, 1e20, 0.1, 327.08, -0.0, 5e-324):
        back = yamlio.loads(yamlio.dumps({"x": x}))["x"]
        assert isinstance(back, float) and back == x


def test_non_finite_is_refused():
    with pytest.raises(ValueError):
        yamlio.dumps({"x": math.nan})


def test_output_is_sorted_and_stable():
    a = yamlio.dumps({"b": 1, "a": [{"z": 2, "x": 1}], "y": "n"})
    assert a == 'a:\n- x: 1\n  z: 2\nb: 1\n"y": "n"\n'  # y and n are YAML 1.1 booleans
