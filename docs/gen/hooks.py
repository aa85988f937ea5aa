"""MkDocs hooks (mkdocs.yml ``hooks:``): the generated reference pages, and links to the repository.

* :func:`on_files` puts the pages of :func:`reference.pages` (docs/gen/reference.py), built
  from the code at build time (the CLI parsers, the measure registry, the error tree and the
  public API), in place of their committed copies: the site is never stale, and the test
  suite checks that the committed copies are current.
* A page under docs/ may link to a file of the repository outside docs/ (a benchmark's
  results, ``../bench/results/production.md``), as it would on a code host. Such a file is
  copied into the site under ``repo/`` and the link rewritten to the copy; a link to a file
  that does not exist fails the strict build (a warning), like any broken link.
"""

from __future__ import annotations

import logging
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference  # docs/gen/reference.py, found through the line above
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.plugins.serpeval")

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: ``[text](target)`` and ``![alt](target)``; the target up to a space, ``)`` or ``#``.
LINK = re.compile(r"(\]\()([^)\s#]+)((?:#[^)\s]*)?\))")
#: Fenced code blocks (their contents are not links).
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)
MOUNT = "repo"


def _outside_target(page_src: str, target: str) -> Path | None:
    """The repository file a relative link of docs/``page_src`` points at, when outside docs/."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
        return None
    resolved = (DOCS / page_src).parent.joinpath(target).resolve()
    try:
        resolved.relative_to(DOCS)
        return None
    except ValueError:
        pass
    try:
        resolved.relative_to(ROOT)
    except ValueError:
        return None
    return resolved


def _links(markdown: str) -> list[str]:
    return [m.group(2) for m in LINK.finditer(FENCE.sub("", markdown))]


#: Folders of docs/ and the nav section their pages belong to.
SECTIONS = {"tutorials": "Tutorials", "how-to": "How-to guides", "reference": "Reference",
            "explanation": "Explanation"}


def _nav_paths(nav: Any) -> set[str]:
    """Every page path the nav of mkdocs.yml names."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(_nav_paths(v) for v in nav.values())) if nav else set()
    if isinstance(nav, list):
        return set().union(*(_nav_paths(v) for v in nav)) if nav else set()
    return set()


def missing_from_nav(nav: Any, docs: Path = DOCS) -> dict[str, list[str]]:
    """``{section: [page paths]}``: the pages of the four folders the nav does not name (a page
    another change added), which :func:`on_config` appends to their section."""
    named = _nav_paths(nav)
    out: dict[str, list[str]] = {}
    for folder, section in SECTIONS.items():
        for page in sorted((docs / folder).glob("*.md")):
            path = f"{folder}/{page.name}"
            if path not in named:
                out.setdefault(section, []).append(path)
    for page in sorted(docs.glob("*.md")):
        if page.name not in named:
            out.setdefault(MORE, []).append(page.name)
    return out


#: The nav section that takes a new page at the top of docs/ (the four folders have their own).
MORE = "More"


def on_config(config: Any) -> Any:
    """A page added under tutorials/, how-to/, reference/ or explanation/ without a nav entry
    joins the end of its section (titled by its first heading), one at the top of docs/ a
    section "More", so that a new page is never left out of the site (nor breaks the strict
    build); mkdocs.yml's own entries keep their order and titles."""
    nav = config.get("nav")
    if not nav:
        return config
    for section, paths in missing_from_nav(nav).items():
        for entry in nav:
            if isinstance(entry, dict) and section in entry:
                entry[section] = list(entry[section]) + paths
                break
        else:
            nav.append({section: paths})
    return config


def on_files(files: Files, config: Any) -> Files:
    for path, text in reference.pages().items():
        committed = files.get_file_from_path(path)
        if committed is not None:
            files.remove(committed)  # the committed copy may be stale: the site gets a fresh one
        files.append(File.generated(config, path, content=text))
    mounted: set[str] = set()
    for file in list(files):
        if not file.src_uri.endswith(".md") or file.abs_src_path is None:
            continue
        for target in _links(Path(file.abs_src_path).read_text(encoding="utf-8")):
            found = _outside_target(file.src_uri, target)
            if found is None or not found.is_file():
                continue  # a missing file is reported by on_page_markdown
            uri = f"{MOUNT}/{found.relative_to(ROOT).as_posix()}"
            if uri not in mounted:
                mounted.add(uri)
                files.append(File.generated(config, uri, abs_src_path=str(found)))
    return files


FULL_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _mounted_page(markdown: str, src: str, files: Files) -> str:
    """A repository file copied under ``repo/``: its relative links to files that are copied
    too still work (the copies keep the repository's layout); the others keep their text."""
    def keep(match: re.Match[str]) -> str:
        target = match.group(3)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return match.group(0)
        path = posixpath.normpath(posixpath.join(posixpath.dirname(src), target.split("#", 1)[0]))
        if files.get_file_from_path(path) is not None:
            return match.group(0)
        return match.group(2)

    return FULL_LINK.sub(keep, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    src = page.file.src_uri
    if src.startswith(MOUNT + "/"):
        return _mounted_page(markdown, src, files)
    if page.file.abs_src_path is None:
        return markdown

    def rewrite(match: re.Match[str]) -> str:
        target = match.group(2)
        found = _outside_target(src, target)
        if found is None:
            return match.group(0)
        if not found.is_file():
            log.warning("docs/%s links to %s, which is not a file of the repository", src, target)
            return match.group(0)
        uri = f"{MOUNT}/{found.relative_to(ROOT).as_posix()}"
        relative = posixpath.relpath(uri, posixpath.dirname(src) or ".")
        return f"{match.group(1)}{relative}{match.group(3)}"

    parts = []
    last = 0
    for fence in FENCE.finditer(markdown):
        parts.append(LINK.sub(rewrite, markdown[last:fence.start()]))
        parts.append(fence.group(0))
        last = fence.end()
    parts.append(LINK.sub(rewrite, markdown[last:]))
    return "".join(parts)


#: A reStructuredText role left in rendered docstrings (``:func:`gate``` renders as
#: ``:func: <code>gate</code>`` through Markdown): the role name is dropped, the code kept.
RST_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|const|term|ref):\s*(?=<code>)")


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    if page.file.src_uri == "reference/api.md":
        return RST_ROLE.sub("", html)
    return html
