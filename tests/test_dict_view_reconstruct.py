"""dict-view-reconstruct: a view of a dict passed in, stored while the frame changes the dict, is a view of that
dict after the call (torch >=2.6,<2.13).

Each shape compiled with ``fullgraph=True`` and compared with eager on calls with other dicts: the return value
and the inputs after the call (a stored view by its type and what it shows). Without the patch (reverted
in-process) the ``WRONG_WITHOUT`` shapes show only the changed items on 2.6-2.12: ``test_without_the_patch_it_fails``
asserts that they do.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)
from packaging.specifiers import SpecifierSet

from tdcompat.versions import parse_torch_version

from conftest import assert_right_break_or_native, eager_vs_compiled, without_patch

NAME = "dict-view-reconstruct"
RELEASE = parse_torch_version(torch.__version__).base_version
#: The patch's range: decided by the range, not by whether the patch is applied, so the tests go red when
#: the patch is off (TDCOMPAT_DISABLE).
IN_RANGE = RELEASE in SpecifierSet(">=2.6,<2.13")


class Holder:
    """An object views are stored on; ``d`` is a dict reached from it."""


def keys_stored(x, d, o):
    o.v = d.keys()
    d["s"] = 1
    return x + 1


def values_stored(x, d, o):
    o.v = d.values()
    d["a"] = x
    return x + 2


def after_a_deletion(x, d, o):
    """A key deleted: Dynamo replays the dict as ``clear()`` + ``update(<all items>)`` (right without the patch)."""
    o.v = d.values()
    del d["a"]
    return x + 2


def items_stored(x, d, o):
    o.v = d.items()
    d["b"] = x
    return x + 3


def stored_in_a_list(x, d, o):
    o.views = [d.keys(), d.values()]
    d["t"] = 2
    return x * 2


def nested_dict_view(x, d, o):
    o.v = o.d.keys()
    o.d["n"] = 1
    return x + 4


def rebound_after(x, d, o):
    v = o.d.keys()
    o.d["q"] = 1
    o.d = {"z": 1}
    o.v = v
    return x + 5


def made_in_frame(x, d, o):
    e = dict(d)
    o.v = e.items()
    e["m"] = 1
    return x + 6


def returned(x, d, o):
    v = d.keys()
    d["r"] = 1
    return x + 7, v


SHAPES = {f.__name__: f for f in (keys_stored, values_stored, after_a_deletion, items_stored, stored_in_a_list,
                                  nested_dict_view, rebound_after, made_in_frame, returned)}
#: Only a dict whose keys were added or changed, none deleted, is replayed through a temporary of the changes.
WRONG_WITHOUT = ("keys_stored", "values_stored", "items_stored", "stored_in_a_list")


def make(n):
    o = Holder()
    o.d = {"a": 1, "b": n, **({"c": 3} if n % 2 else {})}
    return torch.arange(3.0) * n, {"a": 1, "b": n, **({"c": 3} if n % 2 else {})}, o


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_equals_eager(name):
    if IN_RANGE:
        assert eager_vs_compiled(SHAPES[name], make, (1, 2, 3)) is None
    else:
        assert_right_break_or_native(NAME, SHAPES[name], make, (1, 2, 3))


def _fails_without(name: str) -> bool:
    """Measured: every stored view on 2.8-2.12; on 2.6-2.7 the keys and values views (``d.items()`` is
    dict-items-view's there, rebuilt from its source by that patch)."""
    if RELEASE in SpecifierSet("<2.8"):
        return name not in ("items_stored",)
    return True


@pytest.mark.skipif(not IN_RANGE, reason="the patch applies on torch >=2.6,<2.13")
@pytest.mark.parametrize("name", WRONG_WITHOUT)
def test_without_the_patch_it_fails(name):
    if not _fails_without(name):
        pytest.skip(f"{name} is right without this patch here (measured)")
    with without_patch(NAME):
        found = eager_vs_compiled(SHAPES[name], make, (1, 2))
    assert isinstance(found, str), f"without the patch the stored view shows the temporary dict: {found}"
