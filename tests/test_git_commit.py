"""The report's ``git_commit``: the commit of the fedbound checkout that runs (issue 28: it showed n/a
when fedbound, installed with ``pip install .``, ran inside a checkout of the project).

Each case builds its own git repository in a temporary folder, so the expected commit is the one
``git rev-parse HEAD`` gives there, and points ``git_commit`` at a package folder as the running
copy would be found: inside that checkout, or installed elsewhere from it (PEP 610's
``direct_url.json``, replaced here by ``_install_source``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reports import run_metadata
from reports.run_metadata import git_commit

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MODULE = Path(run_metadata.__file__).resolve()


def _checkout(root: Path) -> str:
    """A git repository at ``root`` holding a copy of fedbound's ``reports/run_metadata.py`` and a
    ``pyproject.toml``, one commit; returns that commit."""
    (root / "reports").mkdir(parents=True)
    shutil.copyfile(MODULE, root / "reports" / MODULE.name)
    (root / "pyproject.toml").write_text('[project]\nname = "fedbound"\n', encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_an_installed_copy_reports_the_checkout_it_was_installed_from(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    commit = _checkout(tmp_path / "checkout")
    installed = tmp_path / "site-packages" / "reports"
    installed.mkdir(parents=True)
    monkeypatch.setattr(run_metadata, "_install_source", lambda: tmp_path / "checkout")
    assert git_commit(installed) == f"{commit} (installed from {tmp_path / 'checkout'})"


def test_a_package_inside_a_checkout_reports_its_commit_and_local_changes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_metadata, "_install_source", lambda: None)
    root = tmp_path / "checkout"
    commit = _checkout(root)
    assert git_commit(root / "reports") == commit
    (root / "pyproject.toml").write_text("changed\n", encoding="utf-8")
    assert git_commit(root / "reports") == commit + "+dirty"


def test_another_repository_around_the_package_is_not_a_checkout_of_fedbound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_metadata, "_install_source", lambda: None)
    _checkout(tmp_path / "project")  # e.g. a virtual environment inside a repository of the user's
    venv_package = tmp_path / "project" / ".venv" / "site-packages" / "reports"
    venv_package.mkdir(parents=True)
    assert git_commit(venv_package) is None


def test_outside_a_checkout_or_without_git_it_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_metadata, "_install_source", lambda: None)
    assert git_commit(tmp_path) is None
    root = tmp_path / "checkout"
    _checkout(root)
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))  # git absent: no crash, no commit
    assert git_commit(root / "reports") is None
