"""Shared fixtures.

Isolation rule: any test whose outcome depends on import order or on
process-global Dynamo state (the unpatched baseline, import hooks, env vars read
at import) runs its body in a fresh subprocess via :func:`run_python`; tests in
this process only use the patched Dynamo with ``torch._dynamo.reset()`` before
each compile. The suite therefore passes in any order and under pytest-xdist.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

import tdcompat  # the in-process tests run patched


def run_python(code: str, env: dict = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with a clean tdcompat environment."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env, timeout=900
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"subprocess failed ({proc.returncode}):\nstdout:\n{proc.stdout[-4000:]}"
                             f"\nstderr:\n{proc.stderr[-6000:]}")
    return proc


def last_json(proc: subprocess.CompletedProcess):
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def unpatched_results():
    """The whole catalog run once without tdcompat, in its own process (as the doctor does)."""
    from tdcompat.doctor import _run_side

    return _run_side(False, [], [])


def applied(name: str) -> bool:
    """Is patch ``name`` applied in this process?"""
    return any(s.name == name and s.state.value == "applied" for s in tdcompat.status())


@contextlib.contextmanager
def without_patch(name: str):
    """Patch ``name`` reverted (and Dynamo reset) for the block; put back after it, with every patch that
    needs it (reverting a patch reverts those too)."""
    import torch

    before = [s.name for s in tdcompat.status() if s.state.value == "applied"]
    tdcompat.unpatch([name])
    try:
        torch._dynamo.reset()
        yield
    finally:
        tdcompat.patch(before)
        torch._dynamo.reset()


def compiled_outcome(fn, inputs, calls, fullgraph=True, state=None) -> str:
    """'ok', 'wrong' or the name of the exception the compiled call raised: ``fn(*inputs(n))`` in
    eager and compiled (``backend="eager"``, one compilation for all calls) for each ``n`` of
    ``calls``, on fresh equal inputs, compared with :func:`same`, and ``state(args)`` of the inputs
    each side was given where ``state`` is passed (the side effects)."""
    import torch

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    for n in calls:
        eager_args, compiled_args = inputs(n), inputs(n)
        expected = fn(*eager_args)
        try:
            got = compiled(*compiled_args)
        except Exception as error:  # noqa: BLE001 - the outcome is the exception's name
            return type(error).__name__
        if not same(expected, got) or (state is not None and state(eager_args) != state(compiled_args)):
            return "wrong"
    return "ok"


def same(a, b) -> bool:
    """Compiled and eager results alike: tensors equal, containers item by item (types, dict keys
    in order), everything else ``==`` and of one type."""
    import torch

    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(a) is type(b) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b



def eager_vs_compiled(fn, make, inputs=(0, 1), fullgraph=True):
    """``fn`` compiled (``fullgraph=True`` unless told, backend ``eager``) against eager, one call per item of
    ``inputs`` (``make(item)`` builds equal fresh arguments for each side): None when the return
    value and the arguments after the call are alike every time, else the first difference (a
    string) or what the compiled call raised (the exception)."""
    import torch

    from tdcompat.cases.snapshot import diff, snapshot

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="eager", fullgraph=fullgraph)
    for item in inputs:
        eager_args, compiled_args = make(item), make(item)
        expected = snapshot((fn(*eager_args), eager_args))
        try:
            got = snapshot((compiled(*compiled_args), compiled_args))
        except Exception as exc:  # noqa: BLE001 - a graph break or a crash is the finding
            return exc
        found = diff(expected, got, f"call with {item!r}")
        if found:
            return found
    return None


def is_break(found) -> bool:
    """Is an :func:`eager_vs_compiled` finding a clean graph break (``Unsupported``)?"""
    import torch

    return isinstance(found, torch._dynamo.exc.Unsupported)


def assert_right_break_or_native(patch: str, fn, make, inputs=(1, 2)) -> None:
    """Never worse: ``fn`` compiled equals eager or breaks cleanly; any other finding (a wrong result, a
    crash) must be exactly what Dynamo gives with ``patch`` reverted (then the test xfails, naming it)."""
    import pytest

    found = eager_vs_compiled(fn, make, inputs)
    if found is None or is_break(found):
        return
    with without_patch(patch):
        native = eager_vs_compiled(fn, make, inputs)
    if type(native) is type(found) and (not isinstance(found, str) or native == found):
        pytest.xfail(f"{'wrong' if isinstance(found, str) else 'crashes'} without tdcompat too: {str(found)[:160]}")
    raise AssertionError(f"{found} (without {patch}: {native})")
