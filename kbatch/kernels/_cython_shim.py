"""The names of Cython's pure-Python mode that kbatch.kernels.recordwalk uses, for when Cython is absent.

Compiled, ``import cython`` is Cython's own; interpreted without Cython installed, these stand-ins
make the decorators do nothing and the casts return their value, so the same source runs as plain
Python.  Type annotations are never evaluated (``from __future__ import annotations``), but a type
named in ``declare(...)`` or ``cast(...)`` is: every other name here (``Py_ssize_t``, ``longlong``,
``const[...]``, ...) is a C type, and stands for nothing.
"""

compiled = False


def _unchanged(function):
    return function


cclass = cfunc = ccall = inline = final = _unchanged


def _directive(*_args, **_kwargs):
    return _unchanged


boundscheck = wraparound = initializedcheck = cdivision = locals = exceptval = _directive


def cast(_type, value):
    return value


def declare(_type=None, value=None, **_kwargs):
    return value


class _CType:
    """A C type's name: subscriptable (``const[uchar]``, ``longlong[::1]``) and otherwise inert."""

    def __init__(self, name: str):
        self.name = name

    def __getitem__(self, _item):
        return self

    def __repr__(self) -> str:
        return f"cython.{self.name}"


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return _CType(name)
