"""Changelog fragments (changelog.d/, compiled into CHANGELOG.md at release by towncrier, pyproject.toml).

Each fragment is ``<patch or topic>.<type>.md`` with a type pyproject.toml declares, one bullet's text (no
leading ``- ``, not empty); an ``added`` fragment names a real patch.
"""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRECTORY = os.path.join(ROOT, "changelog.d")


def _types():
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    return set(re.findall(r'\[\[tool\.towncrier\.type\]\]\ndirectory = "([a-z]+)"', text))


def _fragments():
    return sorted(f for f in os.listdir(DIRECTORY) if not f.startswith(".")) if os.path.isdir(DIRECTORY) else []


def test_types_are_keep_a_changelog_sections():
    assert _types() == {"added", "changed", "fixed", "removed"}


@pytest.mark.parametrize("fragment", _fragments())
def test_fragment_name_and_text(fragment):
    match = re.fullmatch(r"([a-z0-9][a-z0-9-]*)\.([a-z]+)\.md", fragment)
    assert match, f"{fragment}: name it <patch or topic>.<type>.md"
    assert match.group(2) in _types(), f"{fragment}: type {match.group(2)} is not one of {sorted(_types())}"
    text = open(os.path.join(DIRECTORY, fragment), encoding="utf-8").read()
    assert text.strip() and not text.startswith("- "), f"{fragment}: one bullet's text, without the '- '"


def test_changelog_has_the_towncrier_marker():
    text = open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8").read()
    assert "<!-- towncrier release notes start -->\n" in text
    assert text.index("<!-- towncrier release notes start -->") < text.index("## [Unreleased]")


def test_fragments_named_after_a_patch_name_a_real_one():
    from tdcompat.patches import ALL_PATCHES

    names = {p.name for p in ALL_PATCHES}
    for fragment in _fragments():
        stem = fragment.split(".")[0]
        if stem.count("-") and fragment.endswith(".added.md") and stem not in names:
            pytest.fail(f"{fragment}: an 'added' fragment names a patch, and {stem} is none")
