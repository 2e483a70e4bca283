"""A machine whose locale is not UTF-8, injected: pathlib reads a file with no encoding in the
locale's (`io.text_encoding`), so here that answers Latin-1. The price table and a drill report
are UTF-8 files with words beyond ASCII; read without `encoding="utf-8"` they would come back
garbled. "Every machine we run on is UTF-8" was an equivalent-mutant reason; it is a fact about a
machine, not about the code (issue 51)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from together_facts.prices import load_price_table
from together_provider.preview.drill import read_drill_report

WORDS = "Together\u2019s list \u2014 as of January"


@pytest.fixture
def latin_1_locale(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = io.text_encoding

    def locale_encoding(encoding: str | None, stacklevel: int = 2) -> str:
        return "latin-1" if encoding is None else real(encoding)

    monkeypatch.setattr(io, "text_encoding", locale_encoding)
    probe = tmp_path / "probe.txt"
    probe.write_text(WORDS, encoding="utf-8")
    assert probe.read_text() != WORDS  # the injected locale garbles UTF-8, as a real one would


@pytest.mark.usefixtures("latin_1_locale")
def test_the_price_table_is_read_as_utf_8_whatever_the_locale(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    table = {"source": WORDS, "as_of": "2026-01-01", "on_demand_usd_per_gpu_hour": {}}
    path.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    assert load_price_table(path).source == WORDS


@pytest.mark.usefixtures("latin_1_locale")
def test_a_drill_report_is_read_as_utf_8_whatever_the_locale(tmp_path: Path) -> None:
    path = tmp_path / "drill.json"
    report = {"verdict": "not_drilled", "reason": WORDS}
    path.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")
    assert read_drill_report(path).reason == WORDS
