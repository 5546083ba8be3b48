"""Regular expressions compiled the first time they are used (standard library only, Python 3.6+).

Compiling costs ~0.1 ms a pattern, paid at import by every run. Patterns most runs never use (host identity for
``--redact-host``, the nvidia-smi parsers on a machine where NVML answers) are declared with :class:`OnFirstUse`,
which behaves as the compiled pattern (``.sub``, ``.search``, ``.finditer``...) and compiles it on first use.
"""

import re


class OnFirstUse(object):
    """``re.compile(*args)``, done the first time an attribute of the pattern is asked for. Each attribute is then
    kept on the instance, so later calls (``to_int`` runs per field of every GPU) find it without coming here."""

    def __init__(self, *args):
        self._args = args
        self._pattern = None

    def __getattr__(self, name):  # sub, search, finditer, pattern...: only names not yet kept come here
        if name.startswith("__") or name in ("_args", "_pattern"):
            raise AttributeError(name)
        if self._pattern is None:
            self._pattern = re.compile(*self._args)
        value = getattr(self._pattern, name)
        self.__dict__[name] = value
        return value
