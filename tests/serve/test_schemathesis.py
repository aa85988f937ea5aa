"""Schemathesis over serve's own OpenAPI description, in-process (the ASGI app, its lifespan
run once): every operation with generated valid and invalid inputs never gets a 5xx, and every
4xx body is a one-line reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.serve.conftest import app_for

schemathesis = pytest.importorskip("schemathesis", reason="the fuzz test needs schemathesis (the test extra)")

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.python import asgi as schemathesis_asgi  # noqa: E402

from serpeval.serve.backends import build_backends  # noqa: E402
from serpeval.serve.config import quick_config  # noqa: E402


@pytest.fixture(scope="module")
def serve_app(tmp_path_factory: Any, small_corpus: Path) -> Any:
    folder = tmp_path_factory.mktemp("schemathesis")
    config = quick_config(str(small_corpus), "k1=1.2,b=0.3", str(folder / "events.duckdb"), max_batch=50,
                          max_body_bytes=100_000)
    return app_for(config, build_backends(config))


@pytest.fixture(scope="module")
def client(serve_app: Any) -> Iterator[Any]:
    """One in-process client for the module: the app's lifespan (store writer, executor) runs once."""
    with schemathesis_asgi.get_client(serve_app) as live:
        yield live


@pytest.fixture(scope="module")
def api_schema(serve_app: Any) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", serve_app)


def check(case: Any, client: Any) -> None:
    response = case.call(session=client)
    where = f"{case.method} {case.formatted_path}"
    assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error, str), where
        assert error, where
        assert "\n" not in error, where


# schemathesis's own pytest plugin does not run under this pytest (9.x): each operation's
# strategy is driven by Hypothesis directly, in both generation modes
@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_no_5xx_and_one_line_reasons(api_schema: Any, client: Any, mode: str) -> None:
    from hypothesis import given

    operations = [result.ok() for result in api_schema.get_all_operations()]
    labels = sorted(op.label for op in operations)
    assert {"GET /search", "POST /events", "GET /healthz", "GET /metrics"} <= set(labels), labels
    exercised: dict[str, int] = {}
    for operation in operations:
        strategy = operation.as_strategy(generation_mode=schemathesis.GenerationMode(mode))

        @settings(max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(case=strategy)
        def run(case: Any) -> None:
            check(case, client)
            exercised[case.operation.label] = exercised.get(case.operation.label, 0) + 1

        try:
            run()
        except Unsatisfiable:
            # an operation without parameters or body has no invalid input to generate
            assert mode == "negative", operation.label
    assert {"GET /search", "POST /events"} <= set(exercised), exercised
    if mode == "positive":
        assert set(exercised) == set(labels)
