"""Type stub of the reports package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from .figures import draw
from .plots import plot_bias, plot_curves, plot_rate
from .power import PowerRow, power_summary
from .progress import SweepRecord, VerifyProgress
from .render import (
    ReportFigure,
    format_power_table,
    format_verdict_table,
    render_html,
    render_markdown,
    write_html,
    write_markdown,
    write_verdicts_json,
)
from .verification import VerificationRecord, read_verification, record_verification
from .verify import VerifyOutcome, prepare_out, rebuild_report
