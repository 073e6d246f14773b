"""Real clients (issue 14): the type of an object's ``__dict__``.

TorchRL's losses build their value estimator inside the compiled call
(``self._value_estimator = ...`` in ``make_value_estimator``); the assignment
goes through ``LossModule.__setattr__`` -> ``nn.Module.__setattr__``, whose
``remove_from`` asks ``isinstance(self.__dict__, dict)`` for a name already in
the instance dictionary. Dynamo models ``obj.__dict__`` of a user object as
``GetAttrVariable(obj, "__dict__")`` with no type before 2.12 (see
``tdcompat/patches/dunder_dict_type.py``). The patch leaves ``nn.Module``s to
Dynamo (their ``remove_from`` deletion would then be replayed wrongly, see the
patch's docstring), so the cases here are plain objects.
"""

from __future__ import annotations

import torch

from .gap_setattr import Plain, _plain
from .harness import GRAPH_BREAK, Case, CaseList, Expect

P = ("dunder-dict-type",)
_BREAK = (Expect("<2.12", GRAPH_BREAK),)


def isinstance_dict(o, x):
    return isinstance(o.__dict__, dict), isinstance(o.__dict__, (list, tuple)), x + 1


def type_of_dict(o, x):
    return type(o.__dict__) is dict, x + 1


def made_in_frame(x):
    o = Plain()
    return isinstance(o.__dict__, dict), type(o.__dict__) is dict, x + o.a


CASES = CaseList()
CASES.add(
    Case("dict_type_isinstance_plain", P, isinstance_dict, _plain, unpatched=_BREAK,
         doc="isinstance(o.__dict__, dict) on an object passed in"),
    Case("dict_type_type_plain", P, type_of_dict, _plain, unpatched=_BREAK,
         doc="type(o.__dict__) is dict on an object passed in"),
    Case("dict_type_made_in_frame", P, made_in_frame, lambda: (torch.randn(3),), unpatched=_BREAK,
         doc="isinstance/type of the __dict__ of an object made in the compiled function"),
)
