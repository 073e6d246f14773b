"""The package's layers run one way (issue 29): version shims at the bottom, the shared
instance-dict model above them, patches above those, the life cycle and the doctor on top.

Read from the source (every ``from .x import`` / ``from ..x import``, also those inside
functions, which are how tdcompat defers importing Dynamo), so no torch is needed.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tdcompat"


def _imports() -> dict:
    """{module: the tdcompat modules it imports anywhere in its source}."""
    graph = {}
    for path in ROOT.rglob("*.py"):
        parts = path.with_suffix("").relative_to(ROOT.parent).parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                if node.module:
                    deps.add(".".join(base + [node.module]))
                else:
                    deps.update(".".join(base + [alias.name]) for alias in node.names)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names if alias.name.startswith("tdcompat"))
        graph[module] = deps
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


def test_no_import_cycle():
    graph = _imports()
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(module):] + [module]))
        if module in done:
            return
        path.append(module)
        for dep in sorted(graph[module]):
            visit(dep)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_version_shims_are_the_bottom_layer():
    assert _imports()["tdcompat.dynamo_api"] <= {"tdcompat.versions"}


def test_instance_dict_model_sits_on_shims_and_handler_protocol():
    assert _imports()["tdcompat.instance_dict"] <= {"tdcompat.dynamo_api", "tdcompat.wrappers"}


def test_shared_models_sit_on_shims_and_handler_protocol():
    """The models patches share (``sequence_identity``, ``dict_pairs``, ``view_values``) use the shims (and the
    plain-Python ``pure_values``) only, like the instance-dict model."""
    for model in ("tdcompat.sequence_identity", "tdcompat.dict_pairs", "tdcompat.view_values"):
        assert _imports()[model] <= {"tdcompat.dynamo_api", "tdcompat.wrappers", "tdcompat.pure_values"}, model


def test_pure_values_import_nothing():
    """``pure_values`` (which Python values hash and compare by value) is plain Python: no shim, no torch."""
    assert _imports()["tdcompat.pure_values"] == set()


def test_patches_do_not_import_each_other():
    graph = _imports()
    for module, deps in graph.items():
        if module.startswith("tdcompat.patches."):
            others = {d for d in deps if d.startswith("tdcompat.patches.")}
            assert not others, f"{module} imports {others}"


def test_patches_sit_below_the_life_cycle_and_the_doctor():
    """A patch may use the shims, the model, the handler protocol and the installer, never the life cycle,
    the registry's state or the doctor above it (``delattr-missing`` asked ``lifecycle.is_applied``)."""
    above = {"tdcompat.lifecycle", "tdcompat.registry", "tdcompat.doctor", "tdcompat.config", "tdcompat",
             "tdcompat.__main__"}
    for module, deps in _imports().items():
        if module.startswith("tdcompat.patches."):
            assert not deps & above, f"{module} imports {deps & above}"
