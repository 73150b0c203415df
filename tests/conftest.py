"""Shared pytest setup: the repository root is importable without installing."""

import locale
import os
import sys
import warnings

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _locale_restored(request):
    """A test (or a library it runs) that changes the process's C locale gets it back
    afterwards, with a warning naming the test: under an ASCII locale, ``read_text()`` on a
    UTF-8 source failed in whichever later test the xdist worker happened to run next."""
    before = locale.setlocale(locale.LC_ALL, None)
    yield
    after = locale.setlocale(locale.LC_ALL, None)
    if after != before:
        locale.setlocale(locale.LC_ALL, before)
        warnings.warn(f"{request.node.nodeid} changed the C locale to {after!r}; restored",
                      stacklevel=1)
