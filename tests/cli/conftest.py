"""The command line never calls a deprecated name (issue 11).

A ``DeprecationWarning`` raised from invariantdp's own code while a CLI test
runs is an error: after a rename the CLI must call the new name, so that its
users never see a warning they cannot act on.  Warnings attributed to the
tests themselves or to other packages are left alone.
"""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.filterwarnings("error::DeprecationWarning:invariantdp"))
