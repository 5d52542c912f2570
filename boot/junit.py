"""Boot results as JUnit XML (for CI dashboards), next to the KTAP.

One <testsuite> per guest (name = the guest's name, properties: arch,
config, kernel command line, console log, run directory), and in it:

* a <testcase> per KTAP test, nested ones included (classname = the guest
  and the dotted path of the parent, name = the test's name): PASS is an
  empty testcase, SKIP has <skipped message="reason"/>, FAIL a <failure>
  with the KTAP directive and the test's diagnostic lines, no result
  (crashed, truncated) an <error>;
* testcase `boot`: the guest ran to its end marker; a hang/timeout, a guest
  that stopped early, a module that did not build or a boot that could not
  start is a <failure> with the message and the console tail;
* testcase `console`: no kernel report on the console (panic, BUG:,
  WARNING:, KASAN, usercopy, SLUB/DEBUG_SLAB reports, ...); each finding's
  text and console excerpt in the <failure>;
* testcase `ktap`: the KTAP document is well formed (plan, all results).

    xml_text = junit.document(guest_results)    # boot.matrix.GuestResult list
    junit.write(xml_text, path)
"""
from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from pathlib import Path

from . import console, console_tail, ktap


# BootResult.failures that are about the run, not a test or a console report.
RUN_FAILURES = ("hang/timeout", "timeout:", "guest did not finish", "test module build failed",
                "error:")
MAX_TEXT = 20000            # characters of a failure's text (the log has the rest)


def _tail(path: Path, n: int = 40) -> str:
    return console_tail(path, n)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "\n... (clipped)"


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")


def _ktap_cases(suite: ET.Element, guest: str, root: ktap.Test, counts: dict) -> None:
    def emit(t: ktap.Test, parent: str) -> None:
        c = _case(suite, parent, t.name or f"test {t.number}")
        counts["tests"] += 1
        if t.status is ktap.Status.SKIP:
            ET.SubElement(c, "skipped", message=t.directive.removeprefix("SKIP").strip()
                          or "skipped")
            counts["skipped"] += 1
        elif t.status is ktap.Status.FAIL:
            msg = t.directive or "not ok"
            body = [f"not ok {t.number} - {t.name}" + (f" # {t.directive}" if t.directive else "")]
            body += t.diagnostics[-20:]
            failed = [p for p, s in t.walk() if s is not t and s.status is ktap.Status.FAIL]
            if failed:
                body.append("failed subtests: " + ", ".join(failed[:20]))
            f = ET.SubElement(c, "failure", message=msg, type="ktap")
            f.text = _clip("\n".join(body))
            counts["failures"] += 1
        elif t.status is ktap.Status.CRASHED:
            e = ET.SubElement(c, "error", message="no result (crashed or truncated)",
                              type="crashed")
            e.text = "\n".join(t.errors + t.diagnostics[-20:])
            counts["errors"] += 1
        for s in t.subtests:
            emit(s, f"{parent}.{t.name}")
    for t in root.subtests:
        emit(t, guest)


def suite_for(r) -> tuple[ET.Element, dict]:
    """The <testsuite> of one boot.matrix.GuestResult."""
    spec, b = r.spec, r.boot
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    suite = ET.Element("testsuite", name=spec.name, hostname=socket.gethostname(),
                       time=f"{r.seconds:.2f}")
    props = ET.SubElement(suite, "properties")
    for k, v in (("arch", spec.arch), ("config", spec.config),
                 ("cmdline", getattr(b, "cmdline", "") or spec.cmdline),
                 ("timeout", f"{spec.timeout:.0f}"), ("verdict", r.verdict),
                 ("console_log", str(r.console_log)), ("run_dir", str(r.out_dir))):
        ET.SubElement(props, "property", name=k, value=str(v))

    # boot: the guest ran to its end
    run_fail = [f for f in r.failures if f.startswith(RUN_FAILURES)]
    c = _case(suite, spec.name, "boot")
    c.set("time", f"{r.seconds:.2f}")
    counts["tests"] += 1
    if run_fail:
        kind = "hang/timeout" if (b is not None and b.timed_out) else \
            ("error" if r.error else "boot")
        f = ET.SubElement(c, "failure", message=run_fail[0].splitlines()[0], type=kind)
        text = "\n".join(run_fail)
        if "console tail" not in text:
            text += f"\nconsole tail ({r.console_log}):\n{_tail(r.console_log)}"
        f.text = _clip(text)
        counts["failures"] += 1

    if b is not None:
        res = getattr(b, "results", None)
        findings = list(getattr(b, "findings", []) or [])
        # console: no kernel report
        c = _case(suite, spec.name, "console")
        counts["tests"] += 1
        if findings:
            kinds = sorted({x.kind for x in findings})
            first = findings[0]
            f = ET.SubElement(c, "failure", type="console",
                              message=f"{len(findings)} console finding(s) [{', '.join(kinds)}]: "
                                      f"{first.line.strip()}")
            f.text = _clip("\n".join(console.summarize(findings, limit=12,
                                                       log_name=str(r.console_log))))
            counts["failures"] += 1
        # ktap: the document is well formed
        c = _case(suite, spec.name, "ktap")
        counts["tests"] += 1
        errs = list(res.errors) if res is not None else ["no KTAP document"]
        if errs:
            f = ET.SubElement(c, "failure", message=errs[0], type="ktap")
            f.text = _clip("\n".join(errs))
            counts["failures"] += 1
        if res is not None:
            _ktap_cases(suite, spec.name, res.root, counts)
    if not r.passed:
        out = ET.SubElement(suite, "system-out")
        out.text = _clip(f"full console log: {r.console_log}\n" + _tail(r.console_log, 60))
    for k, v in counts.items():
        suite.set(k, str(v))
    return suite, counts


def document(results) -> str:
    """JUnit XML for a list of boot.matrix.GuestResult."""
    top = ET.Element("testsuites", name="slabconv boot")
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    results = list(results)
    for r in results:
        s, c = suite_for(r)
        top.append(s)
        for k in total:
            total[k] += c[k]
    for k, v in total.items():
        top.set(k, str(v))
    # the matrix's wall time when the guests ran in it, else their sum
    seconds = max((r.end for r in results), default=0.0) or sum(r.seconds for r in results)
    top.set("time", f"{seconds:.2f}")
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, encoding="unicode") + "\n"


def write(text: str, path: Path) -> Path:
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path
