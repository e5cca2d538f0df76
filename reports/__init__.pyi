"""Type stub of the reports package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from .html_report import render_html, write_html
from .markdown import render_markdown, write_markdown
from .plots import draw, render, save_plot
from .power import PowerRow, power_summary
from .progress import SweepRecord, VerifyProgress
from .report_document import ReportDocument, report_document
from .report_files import ReportFigure
from .text_table import format_power_table, format_verdict_table
from .verdict_rows import QuantityRow, deciding_check, quantity_row
from .verdicts_json import write_verdicts_json
from .verification import VerificationRecord, read_verification, record_verification
from .verify import VerifyOutcome, prepare_out, rebuild_report, run_experiment
