"""``type(od.keys())`` is ``odict_keys`` for an ``OrderedDict`` (``odict_values``, ``odict_items``): every release.

Symptom: the keys/values/items view of an ``OrderedDict`` (or a subclass) reports the plain dict's view type:
``type(od.keys())`` is ``dict_keys``, ``type(od.items()).__name__`` is ``"dict_items"`` (2.8+), and
``isinstance(v, type(collections.OrderedDict().keys()))`` is False. Code that dispatches on the type of a view
(a serializer keyed by type, ``type(v).__name__`` in a repr or a cache key) silently takes the plain dict's
branch. Measured with the case ``ordered_dict_view_type``: wrong on 2.5.1-2.15.0 (keys and values; items from
2.8, where Dynamo models the items view; 2.5-2.7 items are ``dict-items-view``'s tracker, which reports
``odict_items`` itself).

Root cause: torch/_dynamo/variables/dicts.py: ``DictKeysVariable.python_type`` (``DictKeys`` on 2.5-2.6),
``DictValuesVariable.python_type`` and ``DictItemsVariable.python_type`` return ``dict_keys``/``dict_values``/
``dict_items`` whatever class the dict tracker ``dv_dict`` stands for. CPython's ``OrderedDict.keys()`` (C
``odict_keys``) returns an ``odict_keys`` for an ``OrderedDict`` and every subclass of it that does not
override ``keys``.

What the handler accepts: ``python_type()`` of an exact keys, values or items view tracker whose dict tracker's
class (``user_cls``/the dict tracker's own ``python_type``, read statically through ``dynamo_api.dict_class``) is
``OrderedDict`` or a subclass of it; it returns ``odict_keys``/``odict_values``/``odict_items``. Sound: the
tracker stands for the object ``OrderedDict.keys`` & co. returned (a subclass that overrides ``keys`` in Python
is inlined by Dynamo and only reaches a view through ``super().keys()``, which is ``odict_keys`` in CPython
too); ``odict_keys`` subclasses ``dict_keys`` (and so on), so every ``isinstance``/``issubclass`` test that held
for the plain type still holds; the class of the dict is what Dynamo already guards for a dict passed in (its
type) or built itself. Every other view (a plain dict's, a ``defaultdict``'s, a dict subclass's: ``dict_keys``
in CPython) defers to Dynamo.
"""

from __future__ import annotations

import collections

from ..dynamo_api import dict_class
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe

NAME = "ordered-dict-view-type"

#: The view kind (``kv``) -> the type CPython gives an ``OrderedDict``'s view of that kind.
_ODICT_VIEWS = {kind: type(getattr(collections.OrderedDict(), kind)()) for kind in ("keys", "values", "items")}

#: The Dynamo view classes this patch answers for (exact types: a subclass may model something else).
_VIEW_CLASSES = frozenset({"DictKeys", "DictValues", "DictKeysVariable", "DictValuesVariable", "DictItemsVariable"})


@fail_safe(NAME)
def _python_type(wrapped, instance, args, kwargs):
    """``DictKeysVariable.python_type()`` & co.: the ``odict_*`` type for an ``OrderedDict``'s view."""
    if args or kwargs or type(instance).__name__ not in _VIEW_CLASSES:
        return DEFER
    view_type = _ODICT_VIEWS.get(getattr(instance, "kv", None))
    cls = dict_class(getattr(instance, "dv_dict", None))
    if view_type is None or cls is None or not issubclass(cls, collections.OrderedDict):
        return DEFER
    return view_type


_MODULE = "torch._dynamo.variables.dicts"

PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`type(od.keys())` / `type(od.values())` / `type(od.items())` of an `OrderedDict`: **`dict_keys`** & "
         "co., not `odict_keys` (`isinstance(v, type(OrderedDict().keys()))` False)",
         "2.5–2.15",
         "(`>=2.5`)"),
    ),
    fixes="the type of an OrderedDict's keys/values/items view is the plain dict's (dict_keys, dict_values, "
    "dict_items) instead of odict_keys/odict_values/odict_items (silently wrong, every release)",
    upstream="torch/_dynamo/variables/dicts.py: DictKeysVariable.python_type, DictValuesVariable.python_type, "
    "DictItemsVariable.python_type (DictKeys/DictValues on 2.5-2.6)",
    mirrors="open upstream: docs/upstream/ordered-dict-view-type (CPython Objects/odictobject.c: odict_keys, "
    "odict_values, odict_items)",
    torch=">=2.5",
    targets=(
        Target(_MODULE, "DictKeys", "python_type", _python_type, optional=True),  # 2.5-2.6
        Target(_MODULE, "DictValues", "python_type", _python_type, optional=True),
        Target(_MODULE, "DictKeysVariable", "python_type", _python_type, optional=True),  # 2.7+
        Target(_MODULE, "DictValuesVariable", "python_type", _python_type, optional=True),
        Target(_MODULE, "DictItemsVariable", "python_type", _python_type, optional=True),  # 2.8+
    ),
    summary="an `OrderedDict`'s keys/values/items view is an `odict_keys`/`odict_values`/`odict_items`, as CPython",
    history=(
        ("2.5-2.7", "keys and values views report `dict_keys`/`dict_values` (items: a tuple, `dict-items-view`)"),
        ("2.8-2.15", "keys, values and items views report the plain dict's view types"),
    ),
)
