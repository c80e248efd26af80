"""The one error every backend raises when it cannot run here (no project imports, so that
modules.py and the backends can share it without importing each other)."""


class BackendError(RuntimeError):
    """The backend cannot run here; the message says what is missing and how to fix it."""
