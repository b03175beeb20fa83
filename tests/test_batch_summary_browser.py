"""DIR/summary.html in a real headless browser (Debian's Chromium): a batch store filled the way the coordinator fills
it (record_result on reports shaped like the captured real scans in tests/fixtures/scans), its summary written, the
page loaded from disk and its table read back from the DOM after the page's scripts ran: every target a row with its
verdict, score and a link to the report on disk; a click on a column header sorts; the page makes no request beyond
itself, and its Content Security Policy blocks the loads a mistake (or injected markup) would make."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from scanner.batch.jobs import JobResult
from scanner.batch.progress import Progress
from scanner.batch.runner import BatchOptions, record_result
from scanner.batch.store import Store
from scanner.batch.summary import write_summary
from scanner.batch.targets import BatchTarget
from scanner.report.model import Finding, Report, Score, TargetInfo, Timings
from scanner.rules.registry import rule
from tests.chromium_helpers import Page, chromium_page

pytestmark = pytest.mark.browser

CAPTURES = Path(__file__).parent / "fixtures" / "scans"
HOSTILE = '"><img src=http://summary-probe.invalid/x.png onerror=alert(1)>'
READ_TABLE = """Array.from(document.querySelectorAll('#targets tbody tr')).map(r => ({
  cells: Array.from(r.cells).map(c => c.textContent),
  href: r.cells[6].querySelector('a') ? r.cells[6].querySelector('a').getAttribute('href') : null,
  resolved: r.cells[6].querySelector('a') ? r.cells[6].querySelector('a').href : null}))"""
HEADER_CENTRE = """(() => { const th = Array.from(document.querySelectorAll('#targets th')).find(t => t.textContent === %s);
  th.scrollIntoView(); const b = th.getBoundingClientRect();
  return [b.left + b.width / 2, b.top + b.height / 2]; })()"""
INJECT_LOADS = """new Promise(done => {
  const seen = []; document.addEventListener('securitypolicyviolation', e => seen.push([e.blockedURI, e.effectiveDirective]));
  const img = document.createElement('img'); img.src = 'http://summary-probe.invalid/pixel.png'; document.body.appendChild(img);
  const css = document.createElement('link'); css.rel = 'stylesheet'; css.href = 'http://summary-probe.invalid/s.css';
  document.head.appendChild(css);
  fetch('http://summary-probe.invalid/beacon').catch(() => seen.push(['fetch refused', 'connect-src']));
  setTimeout(() => done(seen), 1500); })"""


def _report(capture: dict[str, Any]) -> tuple[BatchTarget, str]:
    """A report as the scan writes it, with the captured scan's target, verdict, score, time and findings."""
    target = capture["command"][2]
    ecosystem = target.split(":", 1)[0]
    name, version = capture["package"].split(":", 1)[1], capture["version"]
    findings = [Finding(rule_id=f["rule"], rule_name=rule(f["rule"]).name, severity=f["severity"],
                        category=rule(f["rule"]).category, tool=f.get("tool"), message=f["message"])
                for f in capture["findings"]]
    report = Report(target=TargetInfo(kind=ecosystem, name=name, requested=target, version=version,
                                      ecosystem=ecosystem), status=capture["status"], verdict=capture["verdict"],
                    score=Score(value=capture["score"], tokens=1000, wasted_tokens=0), findings=findings,
                    timings=Timings(total=capture["wall_seconds"]))
    return BatchTarget(target, origin="line"), report.model_dump_json(indent=2)


def _batch(out: Path) -> tuple[dict[str, dict[str, Any]], list[BatchTarget]]:
    """The store of a batch over the captured scans plus a target that failed and one skipped as unsupported."""
    captures = [json.loads(p.read_text()) for p in sorted(CAPTURES.glob("*.json"))]
    scanned = [_report(capture) for capture in captures]
    failed = BatchTarget(f"npm:{HOSTILE}@1.0.0", origin="line")
    skipped = BatchTarget("oci:docker.io/example/server:1", unsupported="OCI images are not supported yet")
    options = BatchOptions(out=out, retries=0)
    with Store.open(out / "batch.sqlite") as store:
        store.add([target for target, _ in scanned] + [failed, skipped])
        reports = {target.target: text for target, text in scanned}
        while (row := store.claim(now=100.0)) is not None:
            text = reports.get(row.target)
            result = (JobResult(row.key, row.attempts, 0, text, "", 20.0) if text is not None else
                      JobResult(row.key, row.attempts, 2, None, f"error: npm has no package {HOSTILE}", 1.0))
            record_result(store, result, options, Progress(), now=120.0)
        write_summary(out, store.rows(), "error")
    expected = {capture["command"][2]: capture for capture in captures}
    return expected, [failed, skipped]


def _loaded(page: Page, out: Path) -> None:
    page.call("Page.navigate", {"url": (out / "summary.html").as_uri()})
    page.wait_event("Page.loadEventFired")


def _click_header(page: Page, name: str) -> None:
    x, y = page.evaluate(HEADER_CENTRE % json.dumps(name))
    page.click(x, y)


def test_the_browser_shows_every_target_with_its_verdict_score_and_report(tmp_path: Path) -> None:
    out = tmp_path / "batch"
    out.mkdir()
    expected, (failed, skipped) = _batch(out)
    with chromium_page(tmp_path / "profile") as page:
        _loaded(page, out)
        rows = {row["cells"][0]: row for row in page.evaluate(READ_TABLE)}
    assert set(rows) == {*expected, failed.display, skipped.display}
    for target, capture in expected.items():
        cells, href = rows[target]["cells"], rows[target]["href"]
        assert cells[1:4] == ["done", capture["verdict"], str(capture["score"])], target
        assert cells[4] == f"{capture['wall_seconds']:.1f}"
        report = out / href
        assert Path(unquote(urlsplit(rows[target]["resolved"]).path)) == report and href.startswith("reports/")
        assert json.loads(report.read_text())["verdict"] == capture["verdict"]  # the link opens this target's report
        errors = [f["rule"] for f in capture["findings"] if f["severity"] == "error"]
        if errors:
            assert cells[5].startswith(f"{errors[0]} error: ")  # the worst finding is listed first
    assert rows[failed.display]["cells"][1:4] == ["failed", "", ""] and rows[failed.display]["href"] is None
    assert HOSTILE in rows[failed.display]["cells"][5]  # the error, shown as text
    assert rows[skipped.display]["cells"][1] == "skipped"


def test_a_click_on_a_column_header_sorts_the_table(tmp_path: Path) -> None:
    out = tmp_path / "batch"
    out.mkdir()
    expected, _ = _batch(out)
    scores = sorted(capture["score"] for capture in expected.values())
    with chromium_page(tmp_path / "profile") as page:
        _loaded(page, out)
        _click_header(page, "Score")
        ascending = [row["cells"][3] for row in page.evaluate(READ_TABLE)]
        _click_header(page, "Score")
        descending = [row["cells"][3] for row in page.evaluate(READ_TABLE)]
        _click_header(page, "Scan time (s)")
        times = [row["cells"][4] for row in page.evaluate(READ_TABLE)]
    assert ascending == ["", ""] + [str(s) for s in scores]  # targets without a score sort first
    assert descending == list(reversed(ascending))
    measured = [float(t) for t in times if t]
    assert measured == sorted(measured) and times[:2] == ["", ""]


def test_the_page_requests_nothing_and_its_policy_blocks_every_external_load(tmp_path: Path) -> None:
    out = tmp_path / "batch"
    out.mkdir()
    _batch(out)
    page_url = (out / "summary.html").as_uri()
    with chromium_page(tmp_path / "profile") as page:
        _loaded(page, out)
        requested = [e["params"]["request"]["url"] for e in page.events if e["method"] == "Network.requestWillBeSent"]
        assert requested == [page_url]  # self-contained: no script, style, font or image fetched
        violations = page.evaluate(INJECT_LOADS)
        page.evaluate("1")  # let the last network events arrive
        events = list(page.events)
    assert ["http://summary-probe.invalid/pixel.png", "img-src"] in violations
    assert ["http://summary-probe.invalid/s.css", "style-src-elem"] in violations
    assert ["http://summary-probe.invalid/beacon", "connect-src"] in violations
    external = {e["params"]["requestId"] for e in events if e["method"] == "Network.requestWillBeSent"
                and not e["params"]["request"]["url"].startswith("file:")}
    blocked = {e["params"]["requestId"] for e in events if e["method"] == "Network.loadingFailed"
               and e["params"].get("blockedReason") == "csp"}
    assert external <= blocked
    assert not [e for e in events if e["method"] == "Network.responseReceived"
                and not e["params"]["response"]["url"].startswith("file:")]
