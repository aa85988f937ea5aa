"""How the demo prints a table: through the same renderers as the commands, at the console's
width (which :func:`serpeval.cli.common.table_width` set), so a table too wide for the
terminal switches to the record layout instead of being cut off."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def print_table(console: Console, text: str) -> None:
    """Print a table already rendered as text (``render(..., "table")``, ``text_table``),
    ANSI colours included when it has them."""
    from rich.text import Text

    console.print(Text.from_ansi(text.rstrip("\n")), soft_wrap=True)


def colour(console: Console) -> bool:
    """Whether the demo's tables may carry ANSI colours (a terminal that shows them)."""
    return console.is_terminal and not console.no_color
