"""Arboretum: a rules-exact engine, a PettingZoo AEC environment and self-play training."""

__version__ = "0.1.0"
