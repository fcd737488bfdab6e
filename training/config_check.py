"""Declarative range checks for config dataclasses: every field carries its own rule.

A field is declared with ``checked(default, ...)`` instead of a bare default::

    @dataclass
    class MyConfig:
        steps: int = checked(1000, ge=1, le=10**9)
        gamma: float = checked(0.99, ge=0.0, le=1.0)
        mode: str = checked("a", choices=("a", "b"))
        opponents: list = checked(["greedy"], each=("random", "greedy"), min_len=1)

and ``check_config(config, source)`` checks every field against its rule (numbers must also be
finite, so NaN and infinity never pass) and raises ``ConfigValueError``, one line naming every
bad field. A field declared without a rule is a programming error (``TypeError``), so a new
field cannot slip in unchecked. Rules that tie two fields together go in ``relations``: pairs of
(predicate over the config, message). ``config_from_mapping(MyConfig, data, source)`` does the
whole reading of a parsed YAML mapping: unknown keys (with a suggestion), types (from the
annotations ``str``, ``int``, ``float``, ``bool``, ``list``; an int is taken for a float), then
``check_config``.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from arboretum_env.errors import UserError

_KEY = "arboretum_check"


class ConfigValueError(UserError):
    """A config value outside its field's range."""


@dataclass(frozen=True)
class Rule:
    """What one field accepts. Bounds apply to numbers (and to the length of strings with
    ``min_len``/``max_len``); ``choices`` to the value itself; ``each`` to every list item."""

    ge: Optional[float] = None
    gt: Optional[float] = None
    le: Optional[float] = None
    lt: Optional[float] = None
    choices: Optional[tuple] = None
    each: Optional[tuple] = None
    min_len: Optional[int] = None
    max_len: Optional[int] = None
    test: Optional[Callable[[Any], bool]] = None
    meaning: str = ""
    """With ``test``: what the test asks, for the message (``"a plain folder name"``)."""

    def problem(self, value) -> Optional[str]:
        """``None`` if ``value`` passes, else what it must be."""
        if self.choices is not None and value not in self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                return "a finite number"
            if ((self.ge is not None and not value >= self.ge) or (self.gt is not None and not value > self.gt)
                    or (self.le is not None and not value <= self.le)
                    or (self.lt is not None and not value < self.lt)):
                return self._range_text()
        if isinstance(value, (str, list, tuple)):
            if self.min_len is not None and len(value) < self.min_len:
                return f"at least {self.min_len} long" if self.min_len > 1 else "non-empty"
            if self.max_len is not None and len(value) > self.max_len:
                return f"at most {self.max_len} long"
        if self.each is not None:
            bad = [item for item in value if item not in self.each]
            if bad:
                return f"a list of {', '.join(map(str, self.each))} (not {bad[0]!r})"
        if self.test is not None and not self.test(value):
            return self.meaning or "valid"
        return None

    def _range_text(self) -> str:
        parts = [f"{word} {bound:g}" if isinstance(bound, float) else f"{word} {bound}"
                 for word, bound in (("at least", self.ge), ("above", self.gt),
                                     ("at most", self.le), ("below", self.lt)) if bound is not None]
        return " and ".join(parts)


def is_folder_name(name: str) -> bool:
    """One plain folder name: 1 to 100 characters, no slash or backslash, no NUL, no leading dot."""
    return 0 < len(name) <= 100 and not name.startswith(".") and not any(c in name for c in "/\\\0")


FOLDER_NAME = {"test": is_folder_name,
               "meaning": "a plain folder name (no slash, no leading dot, 1 to 100 characters)"}
"""``checked("run", **FOLDER_NAME)``: the rule of a field that names a folder."""


def checked(default, **rule) -> Any:
    """A dataclass field with ``default`` (copied when a list) and its range ``Rule(**rule)``."""
    meta = {_KEY: Rule(**rule)}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def field_rules(cls) -> dict[str, Rule]:
    """Field name -> its rule; ``TypeError`` names a field declared without one."""
    rules = {}
    for f in dataclasses.fields(cls):
        if _KEY not in f.metadata:
            raise TypeError(f"{cls.__name__}.{f.name} has no range check: declare it with "
                            f"training.config_check.checked(default, ...)")
        rules[f.name] = f.metadata[_KEY]
    return rules


def _shown(value) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4,300-digit limit
        return "an integer with too many digits"
    return text if len(text) <= 60 else text[:57] + "..."


def check_config(config, source: str = "config",
                 relations: Sequence[tuple[Callable[[Any], bool], str]] = (),
                 error: type[UserError] = ConfigValueError) -> None:
    """Check every field of the dataclass instance ``config`` against its rule, then the
    ``relations``; raises ``error`` (a ``UserError``), one line listing every problem."""
    problems = []
    for name, rule in field_rules(type(config)).items():
        value = getattr(config, name)
        wrong = rule.problem(value)
        if wrong is not None:
            problems.append(f"{name} must be {wrong}, got {_shown(value)}")
    if not problems:  # relations may assume each field is in range
        problems += [message for holds, message in relations if not holds(config)]
    if problems:
        raise error(f"{source}: " + "; ".join(problems))


_KINDS = {"str": str, "int": int, "float": float, "bool": bool, "list": list}


_EXPONENT_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")
"""``1e-3``: a float in YAML 1.2, text in YAML 1.1 (PyYAML), which wants ``1.0e-3``."""


def _as_float_text(value, annotation: str):
    """A float field's value written as ``1e-3`` (PyYAML reads it as text): the float."""
    if annotation == "float" and isinstance(value, str) and _EXPONENT_FLOAT.fullmatch(value.strip()):
        return float(value)
    return value


def _type_ok(value, annotation: str) -> bool:
    kind = _KINDS[annotation]
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def config_from_mapping(cls, data, source: str = "config",
                        relations: Sequence[tuple[Callable[[Any], bool], str]] = (),
                        error: type[UserError] = ConfigValueError):
    """``cls(**data)`` after checking the keys (unknown ones named, with the closest field) and
    the types (field annotations as strings: ``from __future__ import annotations``), then
    every field's range and the ``relations`` (``check_config``); ``None`` is an empty mapping."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise error(f"{source}: the config must be a mapping of keys to values")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    data = {k: (_as_float_text(v, fields[k].type) if k in fields else v) for k, v in data.items()}
    for key, value in data.items():
        if key not in fields:
            close = difflib.get_close_matches(str(key), fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise error(f"{source}: unknown key {key!r}{hint}")
        if not _type_ok(value, fields[key].type):
            raise error(f"{source}: key {key!r} must be {fields[key].type}, got "
                        f"{type(value).__name__} {_shown(value)}")
    config = cls(**{k: (float(v) if fields[k].type == "float" else v) for k, v in data.items()})
    check_config(config, source, relations, error)
    return config
