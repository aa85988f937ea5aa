"""Print the lowest allowed version of each direct dependency as pip constraints (``name==X``).

The bounds come from ``pyproject.toml`` (one place): ``[project].dependencies`` and the extras
named with ``--extras``. Every such dependency must declare a lower bound (``>=X`` or
``==X``); one without is an error, since its lowest version could never be tested.
``scripts/test-lowest.sh`` installs serpeval under these pins and runs a smoke subset (CI runs
it after the main test run).

    python3 scripts/lowest_versions.py --extras pandas,polars > /tmp/lowest.txt
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``name[extras] specifiers ; marker`` of a PEP 508 requirement (the subset pyproject uses).
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*)(;.*)?$")


def lower_bound(requirement: str) -> tuple[str, str]:
    """``"ibis-framework[duckdb]>=12.0,<13"`` -> ``("ibis-framework", "12.0")``.

    Raises:
        ValueError: the requirement has no ``>=`` or ``==`` bound.
    """
    found = REQUIREMENT.match(requirement)
    if found is None:
        raise ValueError(f"pyproject.toml: cannot read the requirement {requirement!r}")
    name, specifiers = found.group(1), found.group(3)
    for spec in (s.strip() for s in specifiers.split(",")):
        if spec.startswith(">=") or (spec.startswith("==") and "*" not in spec):
            return name, spec[2:].strip()
    raise ValueError(f"pyproject.toml: {requirement!r} declares no lower bound (>=X); add the lowest version "
                     "the project is tested with")


def lowest_pins(extras: list[str], pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``name==lowest`` for every dependency and every requirement of ``extras``, in order,
    each name once (the first bound wins; an extra repeating a dependency names the same)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    optional = project.get("optional-dependencies", {})
    requirements = list(project["dependencies"])
    for extra in extras:
        if extra not in optional:
            raise ValueError(f"pyproject.toml has no extra {extra!r}; extras: {', '.join(optional)}")
        requirements += optional[extra]
    pins: dict[str, str] = {}
    for requirement in requirements:
        name, version = lower_bound(requirement)
        pins.setdefault(name.lower(), f"{name}=={version}")
    return list(pins.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="", help="comma-separated extras whose requirements to pin too")
    args = parser.parse_args()
    try:
        pins = lowest_pins([e.strip() for e in args.extras.split(",") if e.strip()])
    except ValueError as error:
        print(f"lowest_versions.py: error: {error}", file=sys.stderr)
        return 2
    print("\n".join(pins))
    return 0


if __name__ == "__main__":
    sys.exit(main())
