"""Brace expansion as bash does it, shared by Glob, Grep, the rules' globs and the Bash read checks."""

from __future__ import annotations

import pytest

from claude_mini.base.braces import expand_braces, split_outside_braces


def test_expand_braces_nested_and_literal() -> None:
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert expand_braces("x{y}z") == ["x{y}z"]


def test_too_many_alternatives_raise() -> None:
    with pytest.raises(ValueError, match="expands to more than 256 patterns"):
        expand_braces("{a,b}" * 9)


def test_commas_inside_braces_do_not_split() -> None:
    assert split_outside_braces("a,{b,c},d") == ["a", "{b,c}", "d"]
