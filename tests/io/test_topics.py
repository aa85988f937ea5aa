"""Reading query texts: TSV and JSONL, gzipped or not; bad lines name path:line."""

from __future__ import annotations

import gzip

import pytest
from tests.conftest import TREC, need

from serpeval.core.errors import DuplicateError, EmptyInputError, InputError, ParseError
from serpeval.io.topics import read_topics


def test_tsv_with_comments_blank_lines_and_extra_spaces(tmp_path) -> None:
    path = tmp_path / "topics.tsv"
    path.write_text("# id\ttext\n301\tInternational  Organized Crime\n\n302\tPolio\tand more\n",
                    encoding="utf-8")
    assert read_topics(path) == {"301": "International Organized Crime", "302": "Polio and more"}


def test_jsonl_gzipped_beir_style(tmp_path) -> None:
    path = tmp_path / "queries.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"_id": "q1", "text": "what is bm25", "metadata": {}}\n'
                                   b'{"qid": 7, "query": "rm3 expansion"}\n'))
    assert read_topics(path) == {"q1": "what is bm25", "7": "rm3 expansion"}


@pytest.mark.parametrize(("content", "error", "message"), [
    ("301 no tab here\n", ParseError, r"topics.txt:1: expected 'query_id<TAB>text'"),
    ('{"_id": "q1"}\n', ParseError, r"topics.txt:1: a topic needs an id .* and a text"),
    ("{broken\n", ParseError, r"topics.txt:1: not valid JSON"),
    ('{"id": "q1", "text": "a"}\n{"id": "q2", "text": "b", "text": "c"}\n', ParseError,
     r'topics.txt:2: key \["text"\] appears twice in the object'),
    ('{"id": "q1", "text": "a"}\n["q2", "b"]\n', ParseError, r"topics.txt:2: expected a JSON object .* found list"),
    ("1\ta\n\tno id\n", ParseError, r"topics.txt:2: the query id is empty"),
    ('{"id": " ", "text": "x"}\n', ParseError, r"topics.txt:1: the query id is empty"),
    ("1\ta\n\n1\tb\n", DuplicateError, r"topics.txt:3: query '1' appears again \(first on line"),
    ("# only a comment\n", EmptyInputError, "no topics found"),
])
def test_bad_files_name_the_line(tmp_path, content, error, message) -> None:
    path = tmp_path / "topics.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(error, match=message):
        read_topics(path)


def test_missing_and_binary_files(tmp_path) -> None:
    with pytest.raises(InputError, match="topics file not found"):
        read_topics(tmp_path / "nope.tsv")
    (tmp_path / "bin.tsv").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InputError, match=r"bin\.tsv:1: the topics file is UTF-16 text \(it starts with the UTF-16 "
                                         r"byte order mark FF FE"):
        read_topics(tmp_path / "bin.tsv")
    (tmp_path / "bin.tsv").write_bytes(b"1\tpolio\n2\tcaf\xe9\n")
    with pytest.raises(InputError, match=r"bin\.tsv:2: the topics file is not UTF-8 text \(byte 0xe9 at column 6\); "
                                         r"save it as UTF-8\.$"):
        read_topics(tmp_path / "bin.tsv")
    (tmp_path / "cut.tsv.gz").write_bytes(gzip.compress(b"1\tpolio\n" * 100)[:-10])
    with pytest.raises(InputError, match=r"cut\.tsv\.gz: cannot read the topics file"):
        read_topics(tmp_path / "cut.tsv.gz")


def test_robust04_titles() -> None:
    topics = read_topics(need(TREC / "robust04" / "topics.tsv"))
    assert len(topics) == 250
    assert topics["301"] == "International Organized Crime"
