"""tdcompat never makes a working program worse: the corpus, active vs disabled.

Both sides run in fresh interpreters (isolation rule, see conftest.py); each
program must give the same results, the same input state afterwards, the same
number of graphs and graph breaks, and the same number of recompiles.
"""

import json
import os
import subprocess
import sys

import pytest
import torch
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import regression_corpus as corpus

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH = Version(Version(str(torch.__version__)).base_version)


def _side(disable):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TDCOMPAT_")}
    if disable:
        env["TDCOMPAT_DISABLE"] = "*"
    proc = subprocess.run([sys.executable, os.path.join(HERE, "regression_corpus.py")], capture_output=True,
                          text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both_sides():
    return _side(disable=False), _side(disable=True)


def test_corpus_is_large_enough():
    assert len(corpus.PROGRAMS) >= 40


@pytest.mark.parametrize("name", list(corpus.PROGRAMS))
def test_program_unchanged_by_tdcompat(name, both_sides):
    gap = corpus.GAP_ON.get(name)
    if gap and SpecifierSet(gap).contains(TORCH):
        pytest.skip(f"touches a patched gap on torch {TORCH} (covered by the case catalog)")
    active, disabled = both_sides
    if name not in disabled:
        pytest.skip("needs tensordict")
    assert active[name] == disabled[name]
