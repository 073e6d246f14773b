"""Environment variables: valid values, and a clear error for everything else."""

import pytest

from tdcompat.config import ConfigError, disabled, strict

KNOWN = ["alpha", "beta-two"]


@pytest.mark.parametrize("raw, expected", [("", set()), ("  ", set()), ("*", set(KNOWN)), (" * ", set(KNOWN)),
                                           ("alpha", {"alpha"}), ("alpha, beta-two", set(KNOWN))])
def test_disable_valid(raw, expected):
    assert disabled(KNOWN, {"TDCOMPAT_DISABLE": raw}) == expected


@pytest.mark.parametrize("raw", ["gamma", "alpha,gamma", "alpha;beta-two", "ALPHA", "alpha,,beta-two", "*,alpha",
                                 "alpha,"])
def test_disable_invalid_lists_valid_names(raw):
    with pytest.raises(ConfigError) as info:
        disabled(KNOWN, {"TDCOMPAT_DISABLE": raw})
    assert "valid names are: alpha, beta-two" in str(info.value)
    assert "TDCOMPAT_DISABLE" in str(info.value)


@pytest.mark.parametrize("raw, expected", [("", False), ("0", False), ("1", True), ("TRUE", True), (" yes ", True),
                                           ("off", False)])
def test_strict_valid(raw, expected):
    assert strict({"TDCOMPAT_STRICT": raw}) is expected


@pytest.mark.parametrize("raw", ["2", "maybe", "1,1", "tru"])
def test_strict_invalid(raw):
    with pytest.raises(ConfigError, match="TDCOMPAT_STRICT=.* is not a boolean"):
        strict({"TDCOMPAT_STRICT": raw})
