"""trec_eval's command line, parsed the way its ``getopt_long`` parses it.

``-q -m P.5,10 -c -l2 -M100 -J -N 1000 -n`` and the long spellings (``--measure=map``,
unique prefixes such as ``--meas``) work as in trec_eval: short options may be bundled
(``-qc``) and take their argument attached or as the next word (``-mP.5``, ``-m P.5``);
options and the two file names may come in any order; ``--`` ends the options; ``-`` is a
file name (the run on standard input). serpeval adds ``--compat 10.0|9.0.8``.

Numbers are read with C's ``atol`` (``-l2x`` is ``-l 2``), as trec_eval reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from serpeval.measures.cparse import atol

__all__ = ["COMPAT_VERSIONS", "Options", "TrecEvalError", "parse_options"]

COMPAT_VERSIONS = ("10.0", "9.0.8")
MAX_LONG = 2147483647  # trec_eval's MAXLONG, the default -M and -N

#: Exit statuses, as trec_eval uses them.
EXIT_USAGE = 1        # bad option, unknown measure, a -m name without its parameters
EXIT_INPUT = 2        # unreadable or malformed input, bad -m parameters (cannot initialise)
EXIT_MEASURE = 4      # a measure that cannot be computed (duplicate docs, bad coefficients)
EXIT_NO_QUERIES = 7   # no topic has both judgments and results

USAGE = """\
Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_trec' prints all measures, '-m official' is default)
"""


class TrecEvalError(Exception):
    """A failure that ends ``trec_eval`` with ``status`` (trec_eval's exit codes)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Options:
    """Everything the command line says.

    Attributes:
        per_query: ``-q``.
        measures: ``-m`` arguments in order (``P.5,10``, ``all_trec``).
        complete: ``-c`` (average over all qrels topics).
        rel_level: ``-l`` (minimum grade that is relevant).
        summary: False with ``-n``.
        depth: ``-M`` (docs kept per topic after sorting).
        judged_only: ``-J``.
        collection_size: ``-N`` (used by ``utility`` only).
        help: ``-h``.
        version: ``-v``.
        debug_query: the topic of ``-D level.qid`` (only that topic is evaluated).
        debug_level: the level of ``-D``.
        rel_format: ``-R`` (only ``qrels`` is supported).
        results_format: ``-T`` (only ``trec_results``).
        zscores: ``-Z`` file (not supported).
        compat: ``--compat`` version, ``10.0`` (default) or ``9.0.8``.
        files: the non-option arguments (qrels and run).
        typed: the text given to each of ``-l``, ``-N``, ``-M``, read as trec_eval's ``atol``
            reads it (``-Mabc`` is 0): an error about the number shows what was typed.
    """

    per_query: bool = False
    measures: list[str] = field(default_factory=list)
    complete: bool = False
    rel_level: int = 1
    summary: bool = True
    depth: int = MAX_LONG
    judged_only: bool = False
    collection_size: int = 0
    help: bool = False
    version: bool = False
    debug_query: str | None = None
    debug_level: int = 0
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    compat: str = "10.0"
    files: list[str] = field(default_factory=list)
    typed: dict[str, str] = field(default_factory=dict)

    def given(self, letter: str, value: int) -> str:
        """``value`` as an error shows it: the number, and the text typed when it read otherwise."""
        text = self.typed.get(letter)
        return str(value) if text is None or text.strip() == str(value) else f"{text!r}, read as {value}"


# Long option -> (short letter, takes an argument), as trec_eval declares them.
_LONG = {
    "help": ("h", False),
    "version": ("v", False),
    "query_eval_wanted": ("q", False),
    "measure": ("m", True),
    "complete_rel_info_wanted": ("c", False),
    "level_for_rel": ("l", True),
    "nosummary": ("n", False),
    "Debug_level": ("D", True),
    "Judged_docs_only": ("J", False),
    "Number_docs_in_coll": ("N", True),
    "Max_retrieved_per_topic": ("M", True),
    "Rel_info_format": ("R", True),
    "Results_format": ("T", True),
    "Output_old_results_format": ("o", True),
    "Zscore": ("Z", True),
}
_SHORT_WITH_ARG = set("mlDNMRTZ")
_SHORT = set("hvqcnJo") | _SHORT_WITH_ARG


def _usage_error(message: str) -> TrecEvalError:
    return TrecEvalError(f"trec_eval: {message}\n{USAGE}", EXIT_USAGE)


def parse_options(argv: list[str]) -> Options:
    """Parse ``argv`` (without the program name) into :class:`Options`.

    Raises:
        TrecEvalError: status 1 for an unknown or ambiguous option or a missing argument.
    """
    opts = Options()
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word == "--":
            opts.files.extend(argv[i:])
            break
        if word.startswith("--"):
            name, has_value, value = word[2:].partition("=")
            if name == "compat":
                if not has_value:
                    if i >= len(argv):
                        raise _usage_error("option '--compat' requires an argument (10.0 or 9.0.8)")
                    value, i = argv[i], i + 1
                _apply(opts, "compat", value)
                continue
            letter, takes = _long_option(name)
            if takes and not has_value:
                if i >= len(argv):
                    raise _usage_error(f"option '--{name}' requires an argument")
                value, i = argv[i], i + 1
            elif not takes and has_value:
                raise _usage_error(f"option '--{name}' doesn't allow an argument")
            _apply(opts, letter, value if takes else "")
            continue
        if word == "-" or not word.startswith("-"):
            opts.files.append(word)
            continue
        j = 1
        while j < len(word):
            letter = word[j]
            j += 1
            if letter not in _SHORT:
                raise _usage_error(f"invalid option -- '{letter}'")
            if letter in _SHORT_WITH_ARG:
                if j < len(word):
                    value = word[j:]
                elif i < len(argv):
                    value, i = argv[i], i + 1
                else:
                    raise _usage_error(f"option requires an argument -- '{letter}'")
                _apply(opts, letter, value)
                break
            _apply(opts, letter, "")
    return opts


def _long_option(name: str) -> tuple[str, bool]:
    if name in _LONG:
        return _LONG[name]
    matches = [full for full in _LONG if full.startswith(name)] if name else []
    if len(matches) == 1:
        return _LONG[matches[0]]
    if matches:
        raise _usage_error(f"option '--{name}' is ambiguous; possibilities: "
                           + " ".join(f"'--{m}'" for m in matches))
    raise _usage_error(f"unrecognized option '--{name}'")


# Short option -> the Options field it sets: to True, to the text, or to the text's atol.
_FLAGS = {"h": "help", "v": "version", "q": "per_query", "c": "complete", "J": "judged_only"}
_TEXTS = {"R": "rel_format", "T": "results_format", "Z": "zscores"}
_NUMBERS = {"l": "rel_level", "N": "collection_size", "M": "depth"}


def _apply(opts: Options, letter: str, value: str) -> None:
    if letter in _FLAGS:
        setattr(opts, _FLAGS[letter], True)
    elif letter in _TEXTS:
        setattr(opts, _TEXTS[letter], value)
    elif letter in _NUMBERS:
        setattr(opts, _NUMBERS[letter], atol(value))
        opts.typed[letter] = value
    elif letter == "m":
        opts.measures.append(value)
    elif letter == "n":
        opts.summary = False
    elif letter == "D":
        level, dot, query = value.partition(".")
        opts.debug_level = atol(level)
        opts.debug_query = query if dot else None
    elif letter == "compat":
        if value not in COMPAT_VERSIONS:
            raise _usage_error(
                f"--compat must be one of {', '.join(COMPAT_VERSIONS)}; got {value!r}")
        opts.compat = value
    # "o": obsolete in trec_eval, accepted and ignored.
