"""benchmarks/bench_common.write_section: a benchmark rerun replaces its generated text and keeps the hand-written
notes of its section (from ``<!-- name:notes -->`` on); other sections are untouched."""
import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


@pytest.fixture
def bench_common(tmp_path, monkeypatch):
    mod = importlib.import_module("bench_common")
    monkeypatch.setattr(mod, "RESULTS", tmp_path / "RESULTS.md")
    return mod


def section(name, body):
    return f"<!-- {name}:begin -->\n{body}\n<!-- {name}:end -->"


def test_rerun_keeps_notes_and_other_sections(bench_common):
    b, e = "<!-- a:begin -->", "<!-- a:end -->"
    bench_common.RESULTS.write_text("# R\n\n" + section("a", "old table\n\n<!-- a:notes -->\nhand note")
                                    + "\n\n" + section("b", "other"))
    bench_common.write_section(section("a", "new table"), b, e)
    text = bench_common.RESULTS.read_text()
    assert "old table" not in text and "new table" in text
    assert text.index("new table") < text.index("<!-- a:notes -->\nhand note") < text.index(e)
    assert section("b", "other") in text
    bench_common.write_section(section("a", "newer table"), b, e)  # a second rerun keeps them once
    text = bench_common.RESULTS.read_text()
    assert text.count("hand note") == 1 and "new table" not in text and "newer table" in text


def test_section_without_notes_is_replaced_whole(bench_common):
    b, e = "<!-- a:begin -->", "<!-- a:end -->"
    bench_common.RESULTS.write_text(section("a", "old"))
    bench_common.write_section(section("a", "new"), b, e)
    assert bench_common.RESULTS.read_text() == section("a", "new")


def test_first_write_appends(bench_common):
    bench_common.RESULTS.write_text("# R\n")
    bench_common.write_section(section("c", "t"), "<!-- c:begin -->", "<!-- c:end -->")
    assert bench_common.RESULTS.read_text().endswith(section("c", "t") + "\n")
