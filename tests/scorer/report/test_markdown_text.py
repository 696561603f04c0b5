"""Text from data in report.md shows as that text when the Markdown is rendered (markdown-it, the
CommonMark parser rich uses, with GitHub's tables and strikethrough): no link, image, entity, HTML,
emphasis, code, strikethrough or cell break comes out of a method name, a warning or a path, and a
path in a code span is shown without escapes."""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from scorer.report.markdown import render, table
from scorer.sections.base import SectionResult, Table

HOSTILE = ("[click](http://evil.example) ![x](http://evil.example/p.png) &amp; &#x41; <b>bold</b> $x^2$ "
           "~~gone~~ *em* _u_ `code` a|b \\ end")
MARKUP = ("<a ", "<img", "<b>", "<em>", "<strong>", "<del>", "<s>", "<code>")


def _html(md: str) -> str:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md)


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_a_hostile_cell_renders_as_its_own_text():
    t = Table("t", "Title " + HOSTILE, [{"Method": HOSTILE, "Score": 0.5}], ["Method", "Score"], note="1. " + HOSTILE)
    out = _html(table(t))
    assert not any(m in out for m in MARKUP), out
    cells = re.findall(r"<td[^>]*>(.*?)</td>", out)
    assert len(cells) == 2 and _text(cells[0]) == HOSTILE  # one cell: the pipe did not split it
    assert _text(re.search(r"<h3>(.*?)</h3>", out).group(1)) == "Title " + HOSTILE
    note = re.findall(r"<p>(.*?)</p>", out)[-1]
    assert "<ol" not in out and _text(note) == "1. " + HOSTILE  # no list out of a note's "1."


def test_paths_show_as_they_are_and_warnings_stay_one_item():
    data = {"inputs": {"benchmark": {"path": "/data/my_bench`x", "files": []},
                       "runs": {"paths": ["/runs/run_1"], "files": []}, "options": {}, "rows": {}}}
    sections = [SectionResult.absent("matrix", "no rows " + HOSTILE)]
    out = _html(render(data, sections, ["1. first warning " + HOSTILE, "# second"]))
    own = ("<strong>bold</strong>", "<em>italics</em>")  # the report's own legend
    body = out.replace(own[0], "").replace(own[1], "")
    assert not any(m in body for m in MARKUP if m not in ("<code>", "<em>")), out
    assert body.count("<em>") == 1  # the report's "Not available" line, in italics
    assert _text(re.search(r"<p><em>(Not available: .*?)</em></p>", out).group(1)) == "Not available: no rows " + HOSTILE
    codes = [_text(c) for c in re.findall(r"<code>(.*?)</code>", out)]
    assert "/data/my_bench`x" in codes and "/runs/run_1" in codes  # no "\_" inside a code span
    items = [_text(li) for li in re.findall(r"<li>(.*?)</li>", out, flags=re.S)]
    assert "1. first warning " + HOSTILE in items and "# second" in items
    assert "<h1>second" not in out and "<ol" not in out
