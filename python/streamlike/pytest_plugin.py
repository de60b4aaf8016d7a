"""pytest --streamcheck: the test session under streamcheck, each report failing the test that made it
(docs/streamcheck.md, "pytest --streamcheck").

The checker must be in the environment before anything starts CUDA, so a session started without it
runs itself again, whole, under ``python -m streamlike.check --fail ... -m pytest ARGS`` (before any
conftest is imported). Inside the checked session this plugin reads its own process's record (the
file the checker library rewrites at each new report) when each test starts and after each of its
phases: a report new since the test started is that test's, and fails it with the report's text; one
made outside any test (at import, collection, or between tests) fails the session. Standard library
and pytest only: it imports no framework.
"""

import json
import os
import sys

import pytest

from . import check


def pytest_addoption(parser):
    group = parser.getgroup("streamcheck", "streamcheck: wrong streams and capture breakers (streamlike)")
    group.addoption(
        "--streamcheck",
        action="store_true",
        help="run the session under streamcheck; a report fails the test that made it",
    )
    group.addoption("--streamcheck-check", metavar="WHAT", help="what to check (python -m streamlike.check --check)")
    group.addoption(
        "--streamcheck-allow", action="append", default=[], metavar="ENTRY", help="lib:TEXT, sym:TEXT or py:MODULE"
    )
    group.addoption("--streamcheck-json", metavar="FILE", help="every process's reports, merged, to FILE")
    group.addoption("--streamcheck-sarif", metavar="FILE", help="the reports as SARIF 2.1.0 to FILE")
    group.addoption("--streamcheck-library", metavar="PATH", help="the checker library to inject")


def _under_checker():
    return bool(os.environ.get("STREAMLIKE_CHECK_RECORDS"))


def _command(namespace, pytest_args):
    command = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(check.__file__)), "check.py"), "--fail"]
    for option, value in (
        ("--check", namespace.streamcheck_check),
        ("--json", namespace.streamcheck_json),
        ("--sarif", namespace.streamcheck_sarif),
        ("--library", namespace.streamcheck_library),
    ):
        if value:
            command += [option, value]
    for entry in namespace.streamcheck_allow or []:
        command += ["--allow", entry]
    return command + ["-m", "pytest"] + list(pytest_args)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    namespace = early_config.known_args_namespace
    if not getattr(namespace, "streamcheck", False) or _under_checker():
        return
    # Replaces this process: nothing of this session has run yet, and the checked one is the run.
    capture = early_config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    command = _command(namespace, early_config.invocation_params.args)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)


class _Watch:
    """The reports of this process's record, attributed to the test running when each appeared."""

    def __init__(self, records):
        self.records = records
        self.path = os.path.join(records, f"streamcheck-{os.getpid()}.json")
        self.seen = 0  # reports in the record already attributed
        self.outside = []  # reports made outside any test
        self.by_test = {}  # nodeid -> its reports
        self.attributed = {}  # the record's report index -> nodeid

    def _new(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                reports = json.load(f).get("reports") or []
        except (OSError, ValueError):
            return []
        new = [(i, r) for i, r in enumerate(reports[self.seen :], self.seen) if not r.get("allowed")]
        self.seen = len(reports)
        return new

    def outside_tests(self):
        self.outside += [r for _, r in self._new()]

    def during(self, nodeid):
        new = self._new()
        for index, report in new:
            self.attributed[str(index)] = nodeid
            self.by_test.setdefault(nodeid, []).append(report)
        if new:
            self._save()
        return [r for _, r in new]

    def _save(self):
        path = os.path.join(self.records, f"tests-{os.getpid()}.json")
        temporary = path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"pid": os.getpid(), "reports": self.attributed}, f)
        os.replace(temporary, path)


_KEY = pytest.StashKey()


def pytest_configure(config):
    # Under the checker (pytest --streamcheck, or python -m streamlike.check -m pytest): each test
    # answers for its reports.
    if _under_checker():
        config.stash[_KEY] = _Watch(os.environ["STREAMLIKE_CHECK_RECORDS"])


def _watch(config):
    return config.stash.get(_KEY, None)


def pytest_runtest_setup(item):
    watch = _watch(item.config)
    if watch is not None:
        watch.outside_tests()  # what came before this test is not its


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    watch = _watch(item.config)
    if watch is None:
        return
    new = watch.during(item.nodeid)
    if not new:
        return
    report = outcome.get_result()
    text = f"streamcheck: {len(new)} report(s) during this test's {call.when}:\n" + "\n".join(
        check.report_text(r) for r in new
    )
    if report.failed:  # its own failure stays the one shown; the reports beside it
        report.sections.append(("streamcheck", text))
    else:
        report.outcome = "failed"
        report.longrepr = text


def pytest_sessionfinish(session, exitstatus):
    watch = _watch(session.config)
    if watch is None:
        return
    watch.outside_tests()
    if watch.outside and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    watch = _watch(config)
    if watch is None:
        return
    write = terminalreporter.write_line
    terminalreporter.section("streamcheck")
    for nodeid, reports in watch.by_test.items():
        write(f"{nodeid}: {len(reports)} report(s)")
    if watch.outside:
        write(f"{len(watch.outside)} report(s) outside any test (the session fails):")
        for r in watch.outside:
            write(check.report_text(r))
    if not os.path.exists(watch.path):
        write(f"this process (pid {os.getpid()}) has not started the checker: it initialized no CUDA")
    elif not watch.by_test and not watch.outside:
        write(f"no report in this process (pid {os.getpid()})")
