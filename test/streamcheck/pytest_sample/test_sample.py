"""A suite with one clean test and one buggy one, run by plugin.py as `pytest --streamcheck` on a CPU:
stand_in_checker.py makes the report the checker library would make for a launch on a stream other
than the current one (no CUPTI callback comes without a GPU; pytest_sample_gpu/ is the real one)."""

import stand_in_checker as checker

CURRENT = 0x5000


def test_clean():
    checker.launch(stream=CURRENT, current=CURRENT)


def test_buggy():
    checker.launch(stream=0x1, current=CURRENT)  # the bug


def test_clean_after_the_bug():
    checker.launch(stream=CURRENT, current=CURRENT)
