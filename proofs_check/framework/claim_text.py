"""A claim as text: ``ID`` or ``ID[name=value,...]`` (``fedbound verify --claim``, ``select_claim``,
the id of a verdict evaluated with parameters). ``parse_claim_text`` reads it, ``variant_id`` writes
it (``param_text`` a value: floats in their shortest round-trip form, tuples in brackets)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Union

__all__ = ["ParamValue", "parse_claim_text", "param_text", "variant_id"]

ParamValue = Union[bool, int, float, str, None, tuple[Union[int, float], ...]]
"""A claim parameter's value: a JSON scalar or a tuple of numbers (a grid), written ``ID[param=value]``."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse_claim_text(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``ID`` or ``ID[name=value,...]`` as (id, ((name, value text), ...)); commas inside brackets
    belong to a tuple value. ValueError naming ``claim`` for text of another shape or a name given twice."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"claim: expected a claim id such as li2020.thm1 or 'li2020.thm1[E=10]', got {text!r}")
    text = text.strip()
    claim_id, bracket, rest = text.partition("[")
    if any(char.isspace() for char in claim_id):
        raise ValueError(f"claim: {text!r} has white space in its id; write ID or ID[name=value,...] with nothing "
                         "between the id and its '['")
    if not bracket:
        if "]" in text or "=" in text:
            raise ValueError(f"claim: {text!r} is not ID or ID[name=value,...]")
        return text, ()
    if not claim_id or not rest.endswith("]"):
        raise ValueError(f"claim: {text!r} is not ID or ID[name=value,...] (a closing ] ends it)")
    if not rest[:-1].strip():
        raise ValueError(f"claim: {text!r} has empty brackets; write the id alone or ID[name=value,...]")
    pairs: list[tuple[str, str]] = []
    for part in _top_level_split(rest[:-1], text):
        name, equals, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not _NAME.match(name) or not value:
            raise ValueError(f"claim: {part.strip()!r} in {text!r} is not name=value")
        if any(name == seen for seen, _ in pairs):
            raise ValueError(f"claim: {text!r} gives {name} twice")
        pairs.append((name, value))
    return claim_id.strip(), tuple(pairs)


def _top_level_split(body: str, text: str) -> list[str]:
    """``body`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"claim: unbalanced brackets in {text!r}")
        elif char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"claim: unbalanced brackets in {text!r}")
    parts.append(body[start:])
    return parts


def param_text(value: ParamValue) -> str:
    """A parameter value as written in an id: floats in their shortest round-trip form (0.25, 1e-05),
    a tuple in brackets (``[32,64]``)."""
    if isinstance(value, tuple):
        return "[" + ",".join(param_text(item) for item in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def variant_id(claim_id: str, params: Mapping[str, ParamValue]) -> str:
    """The id of a claim evaluated with parameters, ``ID[param=value,...]`` (e.g.
    ``yu2019.thm1[bound_scale=0.25]``, ``li2020.thm1[E=10,seeds=16]``); the claim's own id without
    parameters. ``parse_claim_text`` reads it back."""
    if not params:
        return claim_id
    return f"{claim_id}[{','.join(f'{k}={param_text(v)}' for k, v in params.items())}]"
