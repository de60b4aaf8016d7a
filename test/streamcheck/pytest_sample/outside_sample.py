"""A report made while the module is imported (collection), outside any test: the session fails."""

import stand_in_checker as checker

checker.launch(stream=0x1, current=0x5000)  # the bug, at import


def test_clean():
    checker.launch(stream=0x5000, current=0x5000)
