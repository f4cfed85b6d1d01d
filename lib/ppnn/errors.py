"""The errors a user's input causes: what the library refuses, and the command line's contract.

Every refusal of a user's input -- an argument out of range, a file that is not a model the
importer takes, a parameter below the security a family claims -- raises a subclass of
:class:`PPNNError`. Each also subclasses the builtin it refines (``ValueError`` or
``TypeError``), so ``except ValueError`` keeps catching them. The message names the argument
(or the file, node or op) and the allowed range.

The command line (``python -m ppnn``) prints a :class:`PPNNError` as ``error: <what>: <why>``
on stderr and exits with status 2, without a traceback; any other exception is a bug and
keeps its traceback.

:class:`InvalidArgument`
    a value outside its allowed range (``ValueError``);
:class:`InvalidType`
    a value of the wrong type (``TypeError``);
:class:`InsecureParameters`
    a parameter below the security the family claims, refused unless the caller passes
    ``insecure=True`` (``ValueError``);
:class:`ModelFileError`
    a model file that cannot be imported: not ONNX, truncated, unsafe external data,
    unsupported op or graph (``ValueError``).
"""

from __future__ import annotations

__all__ = ["PPNNError", "InvalidArgument", "InvalidType", "InsecureParameters",
           "ModelFileError", "USER_ERRORS"]


class PPNNError(Exception):
    """Base class: the library refused a user's input (the message says what and why)."""


class InvalidArgument(PPNNError, ValueError):
    """An argument outside its allowed range; the message names it and the range."""


class InvalidType(PPNNError, TypeError):
    """An argument of the wrong type; the message names it and the accepted types."""


class InsecureParameters(InvalidArgument):
    """A parameter below the security the family claims (pass ``insecure=True`` to run it
    anyway: the plan and every result then say so)."""


class ModelFileError(InvalidArgument):
    """A model file the importer refuses; the message names the file (and node, op)."""


#: what the command line reports as ``error: ...`` with exit status 2 (no traceback)
USER_ERRORS = (PPNNError,)
