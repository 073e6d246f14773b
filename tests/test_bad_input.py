"""Bad input gets a clear message and changes nothing else (each in a fresh interpreter)."""

import pytest

from conftest import last_json, run_python

FAKE_VERSION = """
    import json, warnings
    warnings.simplefilter("always")
    import torch
    torch.__version__ = {version!r}
    with warnings.catch_warnings(record=True) as caught:
        import tdcompat, torch._dynamo
    @torch.compile(fullgraph=True, backend="eager")
    def f(x):
        return x * 2
    ok = bool((f(torch.ones(2)) == 2).all())
    print(json.dumps([{{s.name: s.state.value for s in tdcompat.status()}}, [str(w.message) for w in caught], ok]))
"""


@pytest.mark.parametrize("version, message", [
    ("garbage", "cannot read torch version 'garbage'"),
    ("2.4.1+cu121", "older than 2.5.0"),
    ("", "cannot read torch version ''"),
])
def test_unusable_torch_version_patches_nothing(version, message):
    states, messages, ok = last_json(run_python(FAKE_VERSION.format(version=version)))
    assert set(states.values()) == {"not applicable"}
    assert any(message in m for m in messages)
    assert ok


def test_unusable_torch_version_is_an_error_under_strict():
    proc = run_python(FAKE_VERSION.format(version="garbage"), env={"TDCOMPAT_STRICT": "1"}, check=False)
    assert proc.returncode != 0 and "cannot read torch version" in proc.stderr


def test_future_torch_applies_only_open_ended_patches():
    states, messages, ok = last_json(run_python(FAKE_VERSION.format(version="3.0.0")))
    import tdcompat

    for patch in tdcompat.patches.ALL_PATCHES:
        from packaging.specifiers import SpecifierSet

        expected_needed = SpecifierSet(patch.torch).contains("3.0.0")
        assert (states[patch.name] != "not needed") == expected_needed, patch.name
    assert ok


@pytest.mark.parametrize("raw", ["mutable-mapping-setattr;weakref-reconstruct", "MUTABLE-MAPPING-SETATTR", "all", "1"])
def test_malformed_disable_values(raw):
    proc = run_python("""
        import json, warnings
        warnings.simplefilter("always")
        import torch._dynamo, tdcompat
        print(json.dumps({s.name: s.state.value for s in tdcompat.status()}))
    """, env={"TDCOMPAT_DISABLE": raw})
    assert "valid names are" in proc.stderr
    assert "tdcompat applied NO patch, torch runs unpatched" in proc.stderr  # said plainly, first
    assert set(last_json(proc).values()) == {"disabled"}  # nothing applied


def test_malformed_disable_value_is_an_error_under_strict():
    proc = run_python("import torch._dynamo, tdcompat",
                      env={"TDCOMPAT_DISABLE": "no-such-patch", "TDCOMPAT_STRICT": "1"}, check=False)
    assert proc.returncode != 0 and "TdcompatError" in proc.stderr and "unknown patch name" in proc.stderr


def test_catalog_without_tensordict_skips_with_a_clear_line():
    proc = run_python("""
        import sys, runpy
        sys.modules["tensordict"] = None  # as if not installed
        sys.argv = ["runner", "--backend", "eager", "cell4_tensordict_from_tensordictparams"]
        runpy.run_module("tdcompat.cases.runner", run_name="__main__")
    """, check=False)
    out = last_json(proc)["results"]["cell4_tensordict_from_tensordictparams"]["*"]
    assert out["outcome"] == "skipped" and "tensordict is not installed" in out["detail"]


DOCTOR_BAD_SETTINGS = [
    ({"TDCOMPAT_DISABLE": "module_mapping_dict"}, ["did you mean 'module-mapping-dict'?", "separated by commas"]),
    ({"TDCOMPAT_DISABLE": "MODULE-MAPPING-DICT"}, ["did you mean 'module-mapping-dict'?"]),
    ({"TDCOMPAT_DISABLE": "module-mapping-dict;weakref-reconstruct"},
     ["separate names with commas: 'module-mapping-dict,weakref-reconstruct'"]),
    ({"TDCOMPAT_DISABLE": "module-mapping-dict,"}, ["an empty name"]),
    ({"TDCOMPAT_DISABLE": "*,delattr-missing"}, ["'*' (all) cannot be combined"]),
    ({"TDCOMPAT_DISABLE": "no-such-patch"}, ["unknown patch name 'no-such-patch'", "valid names are"]),
    ({"TDCOMPAT_STRICT": "tru"}, ["TDCOMPAT_STRICT='tru' is not a boolean (did you mean 'true'?)"]),
    ({"TDCOMPAT_STRICT": "maybe"}, ["TDCOMPAT_STRICT='maybe' is not a boolean; use one of 1, 0"]),
    ({"TDCOMPAT_DISABLE": "module_mapping_dict", "TDCOMPAT_STRICT": "1"}, ["did you mean 'module-mapping-dict'?"]),
]


@pytest.mark.parametrize("env, messages", DOCTOR_BAD_SETTINGS, ids=[repr(e) for e, _ in DOCTOR_BAD_SETTINGS])
def test_doctor_names_a_malformed_setting_and_exits_2(env, messages):
    proc = run_python("""
        import sys
        from tdcompat.doctor import main
        sys.exit(main(["--status-only"]))
    """, env=env, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "malformed setting(s):" in proc.stdout
    report = proc.stdout.split("malformed setting(s):", 1)[1]
    for message in messages:
        assert message in report
