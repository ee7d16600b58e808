"""The few names of Cython's pure-Python mode that kbatch.recordwalk uses, for when Cython is absent.

Compiled, ``import cython`` is Cython's own; interpreted without Cython installed, these stand-ins
make the decorators do nothing and the casts return their value, so the same source runs as plain
Python.  Type annotations are never evaluated (``from __future__ import annotations``).
"""

compiled = False


def _unchanged(function):
    return function


cclass = cfunc = inline = final = _unchanged


def _directive(*_args, **_kwargs):
    return _unchanged


boundscheck = wraparound = cdivision = locals = exceptval = _directive


def cast(_type, value):
    return value


def declare(*_args, **_kwargs):
    return None
