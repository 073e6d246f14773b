"""tdcompat.import_hook: the post-import hook ``import tdcompat`` registers on ``torch._dynamo`` in place of
wrapt's (about 3 ms of import time). Each test builds a throwaway package on disk, so no torch is needed."""

import sys
import textwrap

import pytest

from tdcompat import import_hook


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``hookpkg`` whose ``__init__`` sets ``ready`` last, and a leaf ``hookpkg.leaf``."""
    root = tmp_path / "hookpkg"
    root.mkdir()
    (root / "__init__.py").write_text("ready = False\nfrom . import leaf\nready = True\n")
    (root / "leaf.py").write_text("value = 1\n")
    (root / "data.txt").write_text("payload")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "hookpkg"
    for name in [m for m in sys.modules if m == "hookpkg" or m.startswith("hookpkg.")]:
        del sys.modules[name]


def test_fires_once_after_the_package_body_ran(package):
    seen = []
    hook = import_hook.when_imported(package, lambda module: seen.append((module.__name__, module.ready)))
    assert hook in sys.meta_path and not seen
    import hookpkg
    import hookpkg.leaf  # noqa: F401
    assert seen == [("hookpkg", True)]  # complete, once, not for the leaf
    assert hook not in sys.meta_path


def test_already_imported_runs_at_once(package):
    __import__(package)
    seen = []
    assert import_hook.when_imported(package, seen.append) is None
    assert [m.__name__ for m in seen] == [package]


def test_the_loader_is_still_the_modules_own(package):
    """Source, resources and reloads go through the wrapped loader; a reload does not fire again."""
    import importlib
    import importlib.resources

    seen = []
    import_hook.when_imported(package, seen.append)
    module = importlib.import_module(package)
    assert "ready = True" in module.__loader__.get_source(package)
    assert importlib.resources.files(module).joinpath("data.txt").read_text() == "payload"
    importlib.reload(module)
    assert len(seen) == 1 and module.ready


def test_a_failed_import_leaves_the_hook_for_the_next_attempt(package, tmp_path):
    init = tmp_path / "hookpkg" / "__init__.py"
    good = init.read_text()
    init.write_text("raise ImportError('not yet')\n")
    seen = []
    hook = import_hook.when_imported(package, seen.append)
    with pytest.raises(ImportError, match="not yet"):
        __import__(package)
    assert not seen and hook in sys.meta_path
    init.write_text(good)
    import importlib

    importlib.invalidate_caches()
    sys.modules.pop(package, None)
    __import__(package)
    assert [m.__name__ for m in seen] == [package] and hook not in sys.meta_path


def test_import_tdcompat_imports_neither_wrapt_nor_dynamo():
    from conftest import last_json, run_python

    proc = run_python(textwrap.dedent("""
        import json, sys, torch, tdcompat
        print(json.dumps(sorted(m for m in sys.modules if m == "wrapt" or m.startswith("torch._dynamo"))))
    """))
    assert last_json(proc) == []
