"""``o |= m`` on a dict subclass rebinds ``o`` to another object (torch 2.9-2.14).

Symptom: ``k = o; o |= {"z": v}`` for ``o`` a ``dict`` or ``OrderedDict`` subclass (passed in or built in
the frame): the items are merged, but afterwards ``o is k`` is False, ``type(o)`` is ``OrderedDict`` for an
``OrderedDict`` subclass (2.9-2.11) and ``dict`` for a ``dict`` subclass built in the frame (2.12-2.14), and
every later write through ``o`` (``o["q"] = 1``) misses the caller's object: silently wrong under
``fullgraph=True``, measured on 2.9.1-2.14.1 (2.13 right for an ``OrderedDict`` subclass passed in; 2.15
right; 2.5-2.8 a graph break, and on 2.5-2.6 a wrong first call for an ``OrderedDict`` subclass built in
the frame, which another patch already turns into a break).

Root cause: ``UserDefinedDictVariable.call_method`` (torch/_dynamo/variables/user_defined.py) sends the
dict methods a subclass inherits to the tracker of its storage (``self._dict_vt``; 2.12: ``_base_vt``), and
``ConstDictVariable.call_method("__ior__")`` (variables/dicts.py) returns ``self``: the storage's tracker,
not the subclass instance, is what ``INPLACE_OR`` stores back into ``o``. 2.14 goes through the number slot
(``UserDefinedObjectVariable.nb_inplace_or_impl`` -> ``SLOT1`` -> the storage's ``__ior__``): the same answer.

What the handlers accept: ``__ior__`` with one positional argument (``call_method``) or the number slot
(2.14) on a ``UserDefinedDictVariable`` with a storage tracker, where Dynamo's answer (its own dispatch,
which goes to the storage only for a class that inherits ``dict.__ior__``/``OrderedDict.__ior__``) is
the storage's tracker itself. It returns the instance's tracker instead. Sound: both C methods return
``self`` (``dict_ior``: ``dict_update_arg(self, other)`` then ``self``; ``odict_inplace_or``:
``mutablemapping_update_arg`` then ``self``), and the merge itself is Dynamo's, recorded on the storage as
without the patch. Anything else (a class with its own ``__ior__``, another answer, an error) is Dynamo's.
"""

from __future__ import annotations

from ..dynamo_api import bind_args, user_dict_storage
from ..spec import Patch, Target
from ..wrappers import DEFER, fail_safe, method_name_gate, routed_gate

NAME = "dict-subclass-ior"


@fail_safe(NAME)
def _ior(wrapped, instance, args, kwargs):
    """``UserDefinedDictVariable.call_method(tx, "__ior__", [other], {})``."""
    bound = bind_args(args, kwargs, ("tx", "name", "args", "kwargs"))
    if bound is None or bound[1] != "__ior__" or len(bound[2]) != 1 or bound[3]:
        return DEFER
    return _the_instance_for_its_storage(wrapped, instance, args, kwargs)


@fail_safe(NAME)
def _nb_ior(wrapped, instance, args, kwargs):
    """``UserDefinedObjectVariable.nb_inplace_or_impl(tx, other)`` on a dict subclass's tracker (2.14)."""
    if bind_args(args, kwargs, ("tx", "other")) is None:
        return DEFER
    return _the_instance_for_its_storage(wrapped, instance, args, kwargs)


def _the_instance_for_its_storage(wrapped, instance, args, kwargs):
    """Dynamo's ``__ior__``, with the instance's tracker where it answered with its storage's."""
    storage = user_dict_storage(instance)
    if storage is None:
        return DEFER
    result = wrapped(*args, **kwargs)
    return instance if result is storage else result


PATCH = Patch(
    name=NAME,
    symptoms=(
        ("`k = o; o \\|= {...}` on a `dict`/`OrderedDict` subclass: afterwards **`o is k` is False**, `type(o)` "
         "is `OrderedDict` (2.9-2.11) or `dict` (2.12-2.14, built in the frame), and later writes through `o` "
         "miss the caller's object", "2.9–2.14", "(`>=2.9,<2.15`)"),
    ),
    fixes="`o |= m` on a dict or OrderedDict subclass rebinds `o` to its storage: `o is k` False, another type, "
    "later writes lost (torch 2.9-2.14)",
    upstream="torch/_dynamo/variables/user_defined.py: UserDefinedDictVariable.call_method ('__ior__' to "
    "the storage); torch/_dynamo/variables/dicts.py: ConstDictVariable.call_method ('__ior__' returns self)",
    mirrors="CPython's dict_ior / odict_inplace_or (return self); 2.15 answers `|=` of a subclass with the instance",
    torch=">=2.9,<2.15",
    fixed_upstream="2.15: `o |= m` of a dict subclass answers with the instance (measured; the subclass "
    "trackers' number slots)",
    targets=(
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "call_method",
               routed_gate(_ior, method_name_gate, frozenset({"__ior__"})), inherited=True,
               params=("tx", "name", "args", "kwargs")),
        # 2.14 sends `o |= m` through the number slot: SLOT1 calls `__ior__` on the storage
        Target("torch._dynamo.variables.user_defined", "UserDefinedDictVariable", "nb_inplace_or_impl", _nb_ior,
               inherited=True, params=("tx", "other"), optional=True),
    ),
    summary="`o |= m` on a dict subclass keeps `o` the same object (the storage's tracker was stored back)",
    history=(
        ("2.5-2.6", "an `OrderedDict` subclass built in the frame: the merged copy (wrong on the first call); "
         "otherwise a graph break"),
        ("2.7-2.8", "a graph break"),
        ("2.9-2.12", "the storage's tracker stored back into `o`: another object, `OrderedDict`/`dict` type"),
        ("2.13", "as 2.12 (right for an `OrderedDict` subclass passed in)"),
        ("2.14", "the same answer through the number slot (`nb_inplace_or_impl` -> `SLOT1`)"),
        ("2.15", "right"),
    ),
)
