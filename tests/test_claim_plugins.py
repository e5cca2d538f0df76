"""Claims from other packages: an installed package's entry point of the group ``fedbound.claims``
adds claims that ``fedbound list`` shows and ``fedbound verify --claim`` runs, without editing
fedbound; errors of such a package name its entry point.

The package is the README's example, ``examples/my_claims`` (its module is the README's code block,
verbatim). It is "installed" the way pip installs it: its module and a ``.dist-info`` folder whose
``entry_points.txt`` holds the entry point, in a folder on ``PYTHONPATH``, which is where
``importlib.metadata`` finds installed distributions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from proofs_check.framework import registry
from proofs_check.framework.registry import ENTRY_POINT_GROUP, ClaimDiscoveryError, discover_claims

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_claims"


def _install(site: Path) -> dict[str, str]:
    """The example package installed into ``site`` as pip lays it out; the environment that sees it."""
    site.mkdir()
    (site / "my_claims.py").write_text((EXAMPLE / "my_claims.py").read_text())
    meta = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    info = site / "my_claims-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['project']['name']}\nVersion: 0.1.0\n")
    points = meta["project"]["entry-points"][ENTRY_POINT_GROUP]
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    return {**os.environ, "PYTHONPATH": str(site)}


def _fedbound(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reports.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_readme_shows_the_example_package_verbatim() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Write your own claim" in readme
    assert f"```python\n{(EXAMPLE / 'my_claims.py').read_text()}```" in readme
    assert '[project.entry-points."fedbound.claims"]\nmy_claims = "my_claims"' in readme


def test_an_installed_package_claim_is_listed_verified_and_its_variant_detected(tmp_path: Path) -> None:
    env = _install(tmp_path / "site")
    listed = _fedbound(["list"], env, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "mine.li-step-rate" in listed.stdout and "planted variant (verify --power): " \
        "mine.li-step-rate[claimed_exponent=-2.5]" in listed.stdout
    assert "li2020.thm1" in listed.stdout  # fedbound's own claims are still there, and come first
    assert listed.stdout.index("li2020.thm1") < listed.stdout.index("mine.li-step-rate")
    out = tmp_path / "report"
    verified = _fedbound(["verify", "--claim", "mine.li-step-rate", "--power", "--out", str(out)], env, tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    document = json.loads((out / "verdicts.json").read_text())
    (claim,) = document["claims"]
    assert claim["claim_id"] == "mine.li-step-rate" and claim["status"] == "PASS"
    assert -2.1 < claim["measured"] < -1.9  # the gap decays like (gamma + T)^-2 here: the bound is loose
    stated, planted = document["power"]  # the power table: the claim as stated, then its planted variant
    assert stated["variant"] == "as stated" and stated["got"] == "PASS"
    assert planted["verdict_id"] == "mine.li-step-rate[claimed_exponent=-2.5]"
    assert planted["expected"] == planted["got"] == "FAIL" and planted["as_expected"]


def test_without_the_package_the_claim_is_unknown(tmp_path: Path) -> None:
    result = _fedbound(["verify", "--claim", "mine.li-step-rate", "--out", str(tmp_path / "r")], dict(os.environ),
                       tmp_path)
    assert result.returncode == 2 and "unknown claim id 'mine.li-step-rate'" in result.stderr


def _points(monkeypatch: pytest.MonkeyPatch, *points: EntryPoint) -> None:
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == ENTRY_POINT_GROUP else ())


def test_an_entry_point_that_cannot_load_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _points(monkeypatch, EntryPoint("broken", "no_such_module_fedbound_test", ENTRY_POINT_GROUP))
    with pytest.raises(ClaimDiscoveryError, match=r"^entry point broken = 'no_such_module_fedbound_test' "
                                                  r"\(group fedbound.claims\): cannot be loaded: ModuleNotFoundError"):
        discover_claims()


def test_an_entry_point_naming_no_claim_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _points(monkeypatch, EntryPoint("odd", "os.path:join", ENTRY_POINT_GROUP))
    with pytest.raises(ClaimDiscoveryError, match=r"^entry point odd = 'os.path:join' .*names a function; "
                                                  r"expected a Claim or a module of claims"):
        discover_claims()


def test_a_claim_id_defined_twice_names_both_places(monkeypatch: pytest.MonkeyPatch) -> None:
    value = "proofs_check.claims.checks.constant_step_control:CLAIM"
    _points(monkeypatch, EntryPoint("again", value, ENTRY_POINT_GROUP))
    with pytest.raises(ClaimDiscoveryError, match=r"^claim id 'control.constant-step-rate' is defined twice: in "
                                                  r"proofs_check.claims and in entry point again"):
        discover_claims()


def test_the_cli_reports_a_broken_package_in_one_line(tmp_path: Path) -> None:
    env = _install(tmp_path / "site")
    (tmp_path / "site" / "my_claims.py").write_text("raise RuntimeError('my_claims is broken')\n")
    result = _fedbound(["list"], env, tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == ("fedbound: error: entry point my_claims = 'my_claims' (group fedbound.claims): "
                                     "cannot be loaded: RuntimeError: my_claims is broken")
