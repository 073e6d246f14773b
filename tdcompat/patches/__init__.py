"""The registry's entries, one module per Dynamo gap.

Each module defines ``PATCH`` (a :class:`tdcompat.spec.Patch`) and imports
nothing from torch at module level, so that ``import tdcompat`` stays cheap.
"""

from __future__ import annotations

import importlib

_PATCH_MODULES = (
    "instance_dict_writes",
    "mapping_dunder_dict",
    "dunder_dict_guards",
    "dunder_dict_replay",
    "dunder_dict_order",
    "dunder_dict_non_str_key",
    "non_str_attr_store",
    "instance_dict_vars",
    "dunder_dict_type",
    "input_context_manager",
    "weakref_reconstruct",
    "weakref_input_source",
    "skipped_module_init",
    "synthetic_type",
    "mutable_mapping_setattr",
    "property_setattr",
    "getattr_missing_guard",
    "dict_missing_key_guard",
    "dict_delitem_missing",
    "dict_copy_source",
    "dict_update_args",
    "dict_subclass_class_method",
    "dict_or_invalid_operand",
    "dict_method_arity",
    "builtin_subclass_truth",
    "defaultdict_construction",
    "defaultdict_as_dict",
    "defaultdict_reconstruct",
    "set_subclass_replay",
    "tuple_subclass_no_args",
    "dict_key_numeric_eq",
    "dict_key_partial_identity",
    "dict_key_dynamic_float",
    "delattr_missing",
    "instance_dict_deletion_guard",
    "super_delattr",
    "unhashable_module",
    "module_mapping_dict",
    "enum_class_iter",
    "reversed_iterator",
    "deepcopy_constant",
    "frozenset_reconstruct",
    "sequence_compare_identity",
    "symbool_sym_float",
    "dataclasses_inline",
    "hash_constant_fold",
    "module_overridden_hash",
    "class_attr_guard",
    "class_hasattr",
    "class_dict_guard",
    "class_stored_attrs",
    "metaclass_setattr",
    "metaclass_hash",
    "sequence_contains_identity",
    "module_deleted_attr",
    "class_setattr",
    "dunder_dict_views",
    "readd_order",
    "module_delattr",
    "dunder_dict_escape",
)

ALL_PATCHES = tuple(importlib.import_module(f"{__name__}.{m}").PATCH for m in _PATCH_MODULES)
