"""scripts/new_patch.py: the scaffold stamps a patch that the registry, the catalog and pytest accept, and
refuses bad input. Run on a copy of the package, never on the checkout."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _scaffold():
    spec = importlib.util.spec_from_file_location("new_patch_under_test", os.path.join(ROOT, "scripts", "new_patch.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def tree(tmp_path):
    shutil.copytree(os.path.join(ROOT, "tdcompat"), tmp_path / "tdcompat",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "CHANGELOG.md"), tmp_path / "CHANGELOG.md")
    (tmp_path / "tests").mkdir()
    return tmp_path


ARGS = ["dict-foo-bar", "--target", "torch._dynamo.variables.dicts:ConstDictVariable.call_method",
        "--torch", "<2.12", "--family", "dict", "--open"]


def test_stamped_patch_is_registered_and_importable(tree, capsys):
    assert _scaffold().main(ARGS, root=str(tree)) == 0
    assert "Next (CONTRIBUTING.md" in capsys.readouterr().out
    for path in ("tdcompat/patches/dict_foo_bar.py", "tests/test_dict_foo_bar.py", "docs/upstream/dict-foo-bar/PR.md"):
        assert (tree / path).exists(), path
    compile((tree / "tests" / "test_dict_foo_bar.py").read_text(), "test_dict_foo_bar.py", "exec")
    fragment = (tree / "changelog.d" / "dict-foo-bar.added.md").read_text()
    assert fragment.startswith("Patch `dict-foo-bar` (torch `<2.12`)"), fragment
    probe = (
        "from tdcompat.patches import ALL_PATCHES\n"
        "from tdcompat.cases.catalog import cases_for\n"
        "p = next(p for p in ALL_PATCHES if p.name == 'dict-foo-bar')\n"
        "assert p.torch == '<2.12' and p.targets[0].qualname.endswith('ConstDictVariable.call_method'), p\n"
        "assert p.symptoms and p.history\n"
        "assert list(cases_for('dict-foo-bar')) == ['dict_foo_bar']\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def test_nothing_is_overwritten(tree):
    assert _scaffold().main(ARGS, root=str(tree)) == 0
    with pytest.raises(SystemExit, match="exists already"):
        _scaffold().main(ARGS, root=str(tree))


@pytest.mark.parametrize("bad, message", [
    (["Dict_Foo", "--target", "m:C.f", "--torch", "<2.12"], "lowercase words"),
    (["dict-foo", "--target", "m:C.f", "--torch", "two.twelve"], "not a packaging specifier"),
    (["dict-foo", "--target", "m.C.f", "--torch", "<2.12"], "module:Class.method"),
    (["dict-foo", "--target", "m:C.f", "--torch", "<2.12", "--family", "nope"], "no tdcompat/cases/gap_nope.py"),
])
def test_bad_input_is_refused(tree, bad, message, capsys):
    with pytest.raises(SystemExit):
        _scaffold().main(bad, root=str(tree))
    assert message in capsys.readouterr().err
    assert not (tree / "tdcompat" / "patches" / "dict_foo.py").exists()
