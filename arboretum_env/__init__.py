"""Arboretum: a rules-exact engine, a PettingZoo AEC environment and self-play training.

``arboretum_env.env(...)`` and ``arboretum_env.raw_env(...)`` make the PettingZoo environment.
They are loaded lazily, so importing the engine alone pulls in no RL library. The submodule
``arboretum_env.env`` is itself callable as ``env(...)`` (see ``arboretum_env/env.py``).
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        import importlib

        module = importlib.import_module(".env", __name__)
        return module if name == "env" else module.raw_env
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "env", "raw_env"])
