"""The documented sweeps and the report commands that read them, run as typed: the part of
test_documented_commands.py (whose docstring says how) that takes longest, in a file of its
own so that its minutes run beside the rest of that file's. Its fixtures (a copy of the
checkout of its own, the user's environment) are that file's, imported."""

from __future__ import annotations

import pytest
from test_documented_commands import (  # noqa: F401 (checkout, environment: module fixtures)
    PLANS,
    _id,
    checkout,
    environment,
    runs_as_typed,
    sweeps_or_their_reports,
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("p", [p for p in PLANS if p.run and sweeps_or_their_reports(p)], ids=_id)
def test_a_documented_sweep_or_its_report_runs_as_typed(p, checkout, environment):  # noqa: F811
    runs_as_typed(p, checkout, environment)
