"""User-registered problem families: registration rules, specs that name their builder, and a rebuild
in a fresh interpreter (as a process-pool or Dask worker does) that finds the builder from its path."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from problems import (
    FederatedProblem,
    ProblemError,
    ProblemSpec,
    build_problem,
    families,
    problem_builder,
    problem_spec,
    register_family,
)

MODULE = "fedbound_user_family_example"
BUILDER_SOURCE = '''
import numpy as np

from problems import FederatedProblem, problem_builder


@problem_builder
def two_clients(n_rows: int = 4, shift: float = 1.0, seed: int = 0, tag: str | None = None) -> FederatedProblem:
    """Two least-squares clients of n_rows rows each; client 1's targets shifted by ``shift``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n_rows, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + shift * np.repeat([0.0, 1.0], n_rows)
    return FederatedProblem("two clients", "least_squares", X, y, [0, n_rows, 2 * n_rows], [0.5, 0.5], 0.1)


@problem_builder
def needs_rows(n_rows: int) -> FederatedProblem:
    return two_clients(n_rows)


@problem_builder
def not_a_problem(n_rows: int = 1) -> str:
    return "rows"


@problem_builder
def takes_a_list(rows: list = None) -> FederatedProblem:
    return two_clients()


@problem_builder
def takes_args(*rows: int) -> FederatedProblem:
    return two_clients()
'''


@pytest.fixture(scope="module")
def builders(tmp_path_factory: pytest.TempPathFactory):
    """The example builder module, importable from a folder on sys.path (and on a subprocess's PYTHONPATH)."""
    folder = tmp_path_factory.mktemp("user_family")
    (folder / f"{MODULE}.py").write_text(textwrap.dedent(BUILDER_SOURCE), encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        module = __import__(MODULE)
        register_family("example.two_clients", module.two_clients)
        yield folder, module
    finally:
        sys.path.remove(str(folder))


def test_a_registered_family_builds_with_its_canonical_spec(builders) -> None:
    _, module = builders
    assert register_family("example.two_clients", module.two_clients).builder == f"{MODULE}:two_clients"  # again
    listed = {family.name: family for family in families()}
    assert not listed["example.two_clients"].shipped and listed["synthetic"].shipped
    spec = problem_spec("example.two_clients", n_rows=np.int64(3), shift=2)
    assert spec.to_json() == {"family": "example.two_clients", "builder": f"{MODULE}:two_clients",
                              "params": {"n_rows": 3, "seed": 0, "shift": 2.0, "tag": None}}
    problem = build_problem(spec)
    assert problem.spec == spec  # the builder made no spec; the registry attached its family spec
    np.testing.assert_array_equal(problem.X, module.two_clients(3, 2.0).X)
    assert build_problem(json.loads(json.dumps(spec.to_json()))) is problem


def test_a_fresh_interpreter_rebuilds_it_from_the_spec_alone(builders) -> None:
    folder, _ = builders
    spec = problem_spec("example.two_clients", n_rows=5, shift=-1.0, seed=4, tag="fresh")
    expected = build_problem(spec).fingerprint
    script = textwrap.dedent("""
        import json, pickle, sys
        from problems import ProblemSpec, build_problem, families
        assert "example.two_clients" not in [family.name for family in families()]
        from_json = build_problem(ProblemSpec.from_json(json.loads(sys.argv[1])))
        from_pickle = build_problem(pickle.loads(bytes.fromhex(sys.argv[2])))
        print(from_json.fingerprint, from_pickle.fingerprint, json.dumps(from_json.spec.to_json(), sort_keys=True))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(spec.to_json()), pickle.dumps(spec).hex()],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(folder)},
    )
    from_json, from_pickle, recorded = out.stdout.split(" ", 2)
    assert from_json == from_pickle == expected
    assert json.loads(recorded) == spec.to_json()


def test_registration_refuses_what_another_process_could_not_import(builders) -> None:
    _, module = builders

    @problem_builder
    def nested(n_rows: int = 1) -> FederatedProblem:
        return module.two_clients(n_rows)

    with pytest.raises(ProblemError, match="^name: 'synthetic' is a shipped problem family"):
        register_family("synthetic", module.two_clients)
    with pytest.raises(ProblemError, match="^name: expected a non-empty family name"):
        register_family(" ", module.two_clients)
    with pytest.raises(ProblemError, match="^name: family 'example.two_clients' is already registered"):
        register_family("example.two_clients", module.needs_rows)
    with pytest.raises(ProblemError, match="^builder: .* is not a top-level function"):
        register_family("example.nested", nested)
    with pytest.raises(ProblemError, match="^builder: .* is not a top-level function"):
        register_family("example.lambda", problem_builder(lambda n_rows=1: module.two_clients(n_rows)))
    with pytest.raises(ProblemError, match="^builder: expected a function"):
        register_family("example.class", FederatedProblem)
    with pytest.raises(ProblemError, match="^builder: parameter 'rows' .* is annotated"):
        register_family("example.list", module.takes_a_list)
    with pytest.raises(ProblemError, match="^builder: parameter 'rows' .* must be a named parameter"):
        register_family("example.args", module.takes_args)
    assert "example.nested" not in [family.name for family in families()]


def test_builders_of_main_or_renamed_functions_are_refused() -> None:
    @problem_builder
    def in_main(n_rows: int = 1) -> FederatedProblem:
        raise AssertionError("never built")

    in_main.__qualname__ = "in_main"
    in_main.__module__ = "__main__"
    with pytest.raises(ProblemError, match="^builder: 'in_main' is defined in __main__"):
        register_family("example.main", in_main)
    in_main.__module__ = __name__  # its module's source has no top-level in_main: refused unimported
    with pytest.raises(ProblemError, match="^builder: .*:in_main is not declared a problem builder"):
        register_family("example.renamed", in_main)


def test_specs_of_user_families_name_the_bad_field(builders) -> None:
    _, module = builders
    register_family("example.needs_rows", module.needs_rows)
    register_family("example.not_a_problem", module.not_a_problem)
    with pytest.raises(ProblemError, match="^n_rows: family 'example.needs_rows' needs this parameter"):
        problem_spec("example.needs_rows")
    with pytest.raises(ProblemError, match="^tag: expected a string"):
        problem_spec("example.two_clients", tag=3)
    with pytest.raises(ProblemError, match="^builder: family 'example.two_clients' is registered with builder"):
        ProblemSpec.from_json({"family": "example.two_clients", "builder": f"{MODULE}:needs_rows"})
    with pytest.raises(ProblemError, match="^builder: no installed module 'no_such_module_xyz'"):
        ProblemSpec.from_json({"family": "example.elsewhere", "builder": "no_such_module_xyz:build"})
    with pytest.raises(ProblemError, match="^builder: expected FILE.py:NAME or MODULE:NAME"):
        ProblemSpec.from_json({"family": "example.elsewhere", "builder": "no_colon"})
    with pytest.raises(ProblemError, match=r"^builder: .*:not_a_problem returned a str"):
        build_problem(problem_spec("example.not_a_problem"))


def test_a_builder_that_records_another_spec_is_refused(builders) -> None:
    register_family("example.mislabelled", mislabelled)
    with pytest.raises(ProblemError, match="^builder: .*:mislabelled returned a problem with spec"):
        build_problem(problem_spec("example.mislabelled"))


@problem_builder
def mislabelled(seed: int = 0) -> FederatedProblem:
    """A builder whose problem records the counterexample's spec instead of its own family's."""
    return build_problem(problem_spec("li_counterexample", N=2, p=2))
