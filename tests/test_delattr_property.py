"""delattr-missing: ``del obj.p`` where ``p`` is a ``property`` of the class without a deleter.

CPython's ``object.__delattr__`` finds the property on the class's MRO and raises ``AttributeError``
(``property 'p' of 'C' object has no deleter``) whatever the instance holds. Dynamo 2.5-2.12 recorded a
deletion and replayed ``del obj.p`` after the graph, where the error escaped the user's ``try``
(measured on 2.5.1-2.12.1; right from 2.13); found by the fuzzer's ``Shadow`` class at fresh seed 438819678
on 2.10. Each program is compiled with ``fullgraph=True`` (and without) and compared with eager on calls
with different inputs; where the property has a deleter or the name is not a property, Dynamo's own
answer must be right or a clean break.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo  # activates tdcompat (patches apply at Dynamo's import)

from tdcompat.versions import parse_torch_version

from conftest import applied, eager_vs_compiled, is_break, without_patch

NAME = "delattr-missing"
RELEASE = parse_torch_version(torch.__version__).release[:2]


class Shadow:
    def __init__(self, x):
        self.a = x

    @property
    def p(self):
        return self.__dict__.get("p", 7)

    @p.setter
    def p(self, value):
        self.__dict__["p"] = value


class Child(Shadow):
    pass


class ReadOnly:
    @property
    def p(self):
        return 1


class WithDeleter:
    def __init__(self, x):
        self.a = x

    @property
    def p(self):
        return self.__dict__.get("p", 0)

    @p.deleter
    def p(self):
        self.__dict__["deleted"] = True


def del_statement(x, o):
    try:
        del o.p
        got = "deleted"
    except AttributeError as e:
        got = ("AttributeError", str(e))
    return got, x + 1


def del_builtin(x, o):
    o.p = x * 2  # written through the setter first
    try:
        delattr(o, "p")
        got = "deleted"
    except AttributeError:
        got = "AttributeError"
    return got, o.p, x + 1


def del_on_made(x, o):
    made = ReadOnly()
    child = Child(x)
    out = []
    for target in (made, child):
        try:
            del target.p
            out.append("deleted")
        except AttributeError:
            out.append("AttributeError")
    return out, x + 1


def del_with_deleter(x, o):
    w = WithDeleter(x)
    del w.p
    return w.__dict__.get("deleted"), x + 1


SHAPES = {f.__name__: f for f in (del_statement, del_builtin, del_on_made, del_with_deleter)}


def _make(n):
    return torch.ones(2) * n, (Shadow(torch.ones(2) * n) if n % 2 else Child(torch.ones(2) * n))


@pytest.mark.parametrize("fullgraph", (True, False), ids=("fullgraph", "breaks"))
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_del_of_a_property(name, fullgraph):
    found = eager_vs_compiled(SHAPES[name], _make, (1, 2, 3), fullgraph=fullgraph)
    assert found is None or (fullgraph and is_break(found)), found


@pytest.mark.skipif(not ((2, 8) <= RELEASE < (2, 13)),
                    reason="wrong natively on 2.5-2.12; on 2.5-2.7 instance-dict-writes' refusal of a __dict__ "
                           "write a property shadows breaks first when only delattr-missing is reverted")
def test_without_the_patch_the_error_escapes_on_2_8_to_2_12():
    if not applied(NAME):
        pytest.skip("delattr-missing is not applied (TDCOMPAT_DISABLE)")
    with without_patch(NAME):
        found = eager_vs_compiled(del_statement, _make, (1, 2))
    assert isinstance(found, AttributeError) and "no deleter" in str(found), found
