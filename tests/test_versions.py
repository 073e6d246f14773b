"""The documented rule mapping torch version strings onto patch ranges."""

import pytest
from packaging.version import Version

from tdcompat.versions import UnsupportedTorchVersion, Verdict, classify, needed, parse_torch_version


@pytest.mark.parametrize(
    "text, spec, verdict",
    [
        ("2.5.1", ">=2.5,<2.9", Verdict.IN_RANGE),
        ("2.5.1+cu124", ">=2.5,<2.9", Verdict.IN_RANGE),
        ("2.8.0+cu128", ">=2.5,<2.9", Verdict.IN_RANGE),
        ("2.9.1", ">=2.5,<2.9", Verdict.OUT_OF_RANGE),
        ("2.13.0+cpu", ">=2.5,<2.9", Verdict.OUT_OF_RANGE),
        ("2.13.0+cpu", ">=2.5", Verdict.IN_RANGE),
        ("2.6.0.dev20241112", ">=2.5,<2.9", Verdict.IN_RANGE),  # leads to 2.6.0: in range
        ("2.6.0a0+git1234", ">=2.5,<2.9", Verdict.IN_RANGE),
        ("2.9.0.dev20250601", ">=2.5,<2.9", Verdict.ASK_PROBE),  # may predate the fix
        ("2.9.0rc1", ">=2.5,<2.9", Verdict.ASK_PROBE),
        ("2.8.0.post1", ">=2.5,<2.9", Verdict.IN_RANGE),
        ("3.0.0", ">=2.5,<2.9", Verdict.OUT_OF_RANGE),
        ("3.0.0", ">=2.5", Verdict.IN_RANGE),
    ],
)
def test_classify(text, spec, verdict):
    assert classify(parse_torch_version(text), spec) is verdict


def test_probe_decides_edge_prereleases():
    v = parse_torch_version("2.9.0.dev20250601")
    assert needed(v, ">=2.5,<2.9", probe=lambda: True) is True
    assert needed(v, ">=2.5,<2.9", probe=lambda: False) is False
    assert needed(v, ">=2.5,<2.9", probe=None) is False  # no probe: do nothing
    # Probes are only asked at the edge: a final release is decided by its version alone.
    assert needed(parse_torch_version("2.9.1"), ">=2.5,<2.9", probe=lambda: True) is False


@pytest.mark.parametrize("text", ["2.4.1", "1.13.0+cu117", "2.4.0.dev20240601"])
def test_too_old(text):
    with pytest.raises(UnsupportedTorchVersion, match="older than 2.5.0"):
        parse_torch_version(text)


@pytest.mark.parametrize("text", ["", "unknown", "nightly", "2.x"])
def test_unreadable(text):
    with pytest.raises(UnsupportedTorchVersion, match="cannot read torch version"):
        parse_torch_version(text)


def test_torchversion_object():
    import torch

    assert isinstance(parse_torch_version(torch.__version__), Version)


def test_nightly_of_oldest_release_is_supported():
    # Classified by the release it leads to (rule 3), so a 2.5 nightly counts as 2.5.
    assert parse_torch_version("2.5.0.dev20240801").base_version == "2.5.0"
