"""The lazy command table (issue 28 item 4): ``serpeval --help`` imports no command module
(and so no NumPy), ``serpeval CMD ...`` imports only CMD's module, and the table, the parser
and the modules agree on every command's name and help line."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from serpeval.cli.app import build_parser
from serpeval.cli.commands import COMMANDS, command

CLI = Path(__file__).resolve().parents[2] / "src" / "serpeval" / "cli"

#: Run ``serpeval ARGS`` as the program does (sys.argv[0] is the console script's name) in a
#: fresh process and print the serpeval command modules and heavy libraries it imported.
PROBE = """
import json, sys
sys.argv = ["serpeval"] + {args!r}
from serpeval.cli import main
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules
                if m.startswith("serpeval.cli.cmd_") or m.split(".")[0] in ("numpy", "pyarrow", "pandas"))
print(json.dumps(sorted({{m if m.startswith("serpeval") else m.split(".")[0] for m in loaded}})))
"""


def imported_by(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [["--help"], ["--version"], []])
def test_top_level_help_imports_no_command_module_and_no_numpy(args: list[str]) -> None:
    assert imported_by(*args) == []


#: ``serpeval trec_eval --help`` is trec_eval's own ``-h``: it describes each measure of ``-m``
#: (default ``official``) from the measure registry, whose modules hold the NumPy kernels.
HELP_NEEDS_THE_MEASURES = {"trec_eval"}


@pytest.mark.parametrize("name", [row.name for row in COMMANDS])
def test_a_commands_help_loads_no_numpy(name: str) -> None:
    """``serpeval CMD --help`` as a program (with its memory set-up, which skips NumPy's page
    setting for a help) imports CMD's module and builds its parser, and loads no NumPy."""
    loaded = imported_by(name, "--help")
    module = f"serpeval.cli.cmd_{name.replace('-', '_')}"
    assert module in loaded  # the parser was built, not just the table listed
    if name in HELP_NEEDS_THE_MEASURES:
        assert "numpy" in loaded  # when this fails, the exemption above can go
    else:
        assert "numpy" not in loaded, f"serpeval {name} --help loaded NumPy"


def test_a_command_imports_only_its_own_module() -> None:
    loaded = imported_by("measures", "--help")
    assert [m for m in loaded if m.startswith("serpeval.cli.cmd_")] == ["serpeval.cli.cmd_measures"]
    loaded = imported_by("diff", "--help")
    assert [m for m in loaded if m.startswith("serpeval.cli.cmd_")] == ["serpeval.cli.cmd_diff"]


def test_lazy_and_full_parsers_show_the_same_top_level_help() -> None:
    assert build_parser(only=()).format_help() == build_parser().format_help()


def test_every_module_registers_its_row_with_the_tables_help_line() -> None:
    listed = build_parser()._subparsers._group_actions[0]._choices_actions  # type: ignore[union-attr]
    assert [(a.dest, a.help) for a in listed] == [(row.name, row.help) for row in COMMANDS]
    for row in COMMANDS:
        assert row.module == f"serpeval.cli.cmd_{row.name.replace('-', '_')}"
        assert (CLI / f"{row.module.rsplit('.', 1)[1]}.py").is_file()
    assert command("nope") is None


def test_an_unknown_command_is_still_named_with_every_choice(capsys: pytest.CaptureFixture[str]) -> None:
    from serpeval.cli import main

    with pytest.raises(SystemExit):
        main(["bogus"])
    err = capsys.readouterr().err
    assert err.startswith("serpeval: error: argument COMMAND: invalid choice: 'bogus'")
    assert all(f"'{row.name}'" in err for row in COMMANDS)


def test_no_command_module_imports_another() -> None:
    """docs/architecture.md: commands share helpers through serpeval.cli.common, never import
    each other (at module level or inside a function)."""
    offenders = []
    for path in sorted(CLI.glob("cmd_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("serpeval.cli.cmd_"):
                offenders.append(f"{path.name}: {node.module}")
            if isinstance(node, ast.Import):
                offenders += [f"{path.name}: {a.name}" for a in node.names if a.name.startswith("serpeval.cli.cmd_")]
    assert offenders == []


def test_no_cli_module_imports_the_cli_package_back() -> None:
    """The loop ``serpeval.cli`` <-> ``cli/failures.py`` / ``cmd_trec_eval.py`` (each took
    ``interrupted`` from the package, the package took them inside functions) is cut:
    ``interrupted`` lives in failures.py, and no module of cli/ imports a name of the package."""
    submodules = {p.stem for p in CLI.glob("*.py")} | {p.name for p in CLI.iterdir() if p.is_dir()}
    offenders = []
    for path in sorted(CLI.rglob("*.py")):
        if path == CLI / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "serpeval.cli":
                offenders += [f"{path.name}: {a.name}" for a in node.names if a.name not in submodules]
    assert offenders == []


def test_nothing_below_the_cli_reads_an_argparse_namespace() -> None:
    """Only cli/ parses arguments: the Spark backend of ``evaluate`` (it reads the command's
    namespace) is cli/spark_backend.py, no longer spark/cli.py."""
    src = CLI.parent
    users = sorted(str(p.relative_to(src)) for p in src.rglob("*.py")
                   if CLI not in p.parents and "argparse" in p.read_text(encoding="utf-8"))
    assert users == []


def test_the_demo_borrows_from_no_command_but_the_trec_eval_program() -> None:
    """The demo (run by ``serpeval demo``) takes the A/B table digest from cli/common.py, not
    from cmd_ab.py; it runs ``trec_eval`` through that program's entry point
    (``serpeval.cli.cmd_trec_eval.run``, the documented way to run trec_eval in a process)."""
    borrowed = sorted(f"{path.name}: {node.module}"
                      for path in (CLI / "demo").glob("*.py")
                      for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("serpeval.cli.cmd_"))
    assert borrowed == ["trec_eval.py: serpeval.cli.cmd_trec_eval"]
