"""The eager/compiled comparator: what it calls equal must be what no program can tell apart."""

from __future__ import annotations

from tdcompat.cases.snapshot import diff, snapshot

from fuzzer import readable_diff


def nan() -> float:
    return float("nan")  # a new object on every call: NaN keys match only by identity


class Holder:
    pass


def holder(*keys) -> Holder:
    h = Holder()
    for i, k in enumerate(keys):
        h.__dict__[k] = i
    return h


def test_nan_keys_of_two_runs_compare_equal() -> None:
    # Eager and compiled each make their own NaN: the n-th NaN key of one run is the n-th of the other.
    assert diff(snapshot({nan(): 1, "a": 2}), snapshot({nan(): 1, "a": 2})) is None
    assert readable_diff(snapshot(holder("w", nan())), snapshot(holder("w", nan())), "out") is None


def test_nan_keys_still_differ_where_a_program_can_tell() -> None:
    assert diff(snapshot({nan(): 1}), snapshot({nan(): 2}))  # the value
    assert diff(snapshot({nan(): 1, nan(): 2}), snapshot({nan(): 1}))  # how many NaN keys
    assert diff(snapshot({nan(): 1, "a": 2}), snapshot({"a": 2, nan(): 1}))  # their order
    assert diff(snapshot({nan(): 1}), snapshot({1.0: 1}))  # a NaN is no other float
    assert readable_diff(snapshot(holder("w", nan())), snapshot(holder("w")), "out")
    assert readable_diff(snapshot(holder(nan(), nan())), snapshot(holder(nan())), "out")
