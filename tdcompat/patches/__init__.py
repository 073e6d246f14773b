"""The registry's entries, one module per Dynamo gap.

Each module defines ``PATCH`` (a :class:`tdcompat.spec.Patch`) and imports
nothing from torch at module level, so that ``import tdcompat`` stays cheap.
"""

from __future__ import annotations

ALL_PATCHES = ()
