"""recompile-cache-invalidation (torch 2.5): a cache entry invalidated while a frame compiles is removed
when the compile ends, not while Dynamo walks the entries of the frame it recompiles.

The program below is run in its own interpreter (a segmentation fault is the failure): a graph break inside
``out.append(...)`` ID-matches the bound method ``out.append`` (it dies between calls, and its finalizer
invalidates the entry of the resumed frame); the second call recompiles the frame before it
(``getattr-missing-guard``'s guard on the missing attribute ``z`` of a new object), whose walk of the
cache entries met the freed entry on 2.5.1 (fresh fuzz seed 486679057, program 486680517039463).
Without the patch (``TDCOMPAT_DISABLE``) 2.5.1 crashes (asserted); with it, and on every other release,
compiled equals eager on three calls with different inputs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from tdcompat.versions import parse_torch_version

RELEASE = parse_torch_version(torch.__version__).release[:2]
NAME = "recompile-cache-invalidation"

PROGRAM = textwrap.dedent('''
    import gc, re, sys
    import tdcompat  # noqa: F401
    import torch


    class M:
        def __init__(self, x, n):
            self.a, self.t = n, x + n
            if n % 2 == 0:
                self.__dict__["p"] = -n

        @property
        def p(self):
            return 7


    def f(x, a0):
        out = []
        a0.__dict__["p"] = x + 1
        out.append(getattr(a0, "p"))
        out.append("p" in a0.__dict__)
        try:
            del a0.z
        except AttributeError:
            out.append("AttributeError")
        out.append(a0.__dict__.pop("p", x - 0.5))
        out.append(hasattr(a0, "p"))
        try:
            out.append(a0.z)
        except AttributeError:
            out.append("AttributeError")
        return out


    def state(o):
        return sorted((k, str(v)) for k, v in vars(o).items())


    compiled = torch.compile(f, backend="eager")
    for n in (1, 2, 3):
        x = torch.arange(3.0) * n
        a, b = M(x, n), M(x, n)
        want, got = f(x, a), compiled(x, b)
        assert str(want) == str(got) and state(a) == state(b), (n, want, got, state(a), state(b))
    for k in range(300):  # allocations that reuse freed memory
        re.compile(f"a{k}(b|c)*d[{k % 7}]+")
        re.purge()
    gc.collect()
    print("equal to eager")
''')


def _run(without_patch: str = "") -> subprocess.CompletedProcess:
    """PROGRAM in its own interpreter, with tdcompat, less the patch named (``TDCOMPAT_DISABLE``)."""
    env = dict(os.environ, TDCOMPAT_DISABLE=without_patch, PYTHONFAULTHANDLER="1")
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=600)


def test_recompile_after_an_id_matched_object_died():
    proc = _run()
    assert proc.returncode == 0 and "equal to eager" in proc.stdout, proc.stdout + proc.stderr[-3000:]


@pytest.mark.skipif(RELEASE != (2, 5), reason="the entry is kept on invalidation from 2.6 (measured 2.6.0, 2.8.0)")
def test_crashes_on_2_5_without_the_patch():
    proc = _run(without_patch=NAME)
    assert proc.returncode != 0, proc.stdout
    assert "Segmentation fault" in proc.stderr or "global_scope" in proc.stderr, proc.stderr[-3000:]
