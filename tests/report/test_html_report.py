"""``write_html_report``: one self-contained page with tables and embedded plots."""

from __future__ import annotations

import re

import pytest


@pytest.fixture(scope="module")
def result():
    from accelsim.api import simulate

    return simulate("tpu_v4", "alexnet", mode="event")


def test_report_is_one_self_contained_page(result, tmp_path):
    from accelsim.devices import result_roofline
    from accelsim.report.html import write_html_report

    p = write_html_report(result, tmp_path / "r.html", roofline=result_roofline(result))
    text = p.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", text), "no external resources"
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    # cycles, utilisation, roofline, timeline, energy
    assert len(images) == 5 and all(len(b) > 5000 for b in images)
    for heading in ("Summary", "Cycles per layer", "Utilisation per layer", "Roofline",
                    "Timeline", "Energy", "Per-layer table"):
        assert f"<h2>{heading}</h2>" in text
    for layer in result.layers["layer"]:
        assert f"<td>{layer}</td>" in text
    assert "TOPS/W" in text and "% of bound" in text


def test_report_without_energy_or_roofline(result, tmp_path):
    """Optional parts are left out, not failed on."""
    import copy

    from accelsim.report.html import write_html_report

    bare = copy.copy(result)
    bare.energy = None
    bare.runs = []
    text = write_html_report(bare, tmp_path / "b.html").read_text()
    assert "<h2>Roofline</h2>" not in text and "<h2>Energy</h2>" not in text
    assert text.count("data:image/png;base64,") == 3


def test_text_is_escaped(result, tmp_path):
    from accelsim.report.html import write_html_report

    text = write_html_report(result, tmp_path / "e.html", title="<b>x</b> & y").read_text()
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in text and "<b>x</b>" not in text
