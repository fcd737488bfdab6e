"""Exceptions shared by all layers."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from a user (a file, an option, a position).

    The message is one line and is shown as is: ``arboretum: error: <message>``.
    """
