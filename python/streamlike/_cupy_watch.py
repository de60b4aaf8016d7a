"""CuPy's current-stream provider, registered as soon as CuPy is imported (docs/current-stream.md).

The provider lives in the package and joins the process's one current-stream registry, so that a
C++ scope opened in any copy of streamlike (an extension module's) also sets CuPy's current stream.
Where CuPy is imported after the package, nothing of the package may run before such a scope: this
hook registers the provider when the import of ``cupy`` finishes. Where CuPy came first, the
package registers it when it is imported.
"""

import importlib.abc
import sys
import threading

from ._streamlike import _register_cupy_if_loaded

_WATCHED = "cupy"


class _ThenRegister(importlib.abc.Loader):
    """The loader that found ``cupy``, and the provider's registration once its module ran."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        # The module keeps its own loader, as without the hook.
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _stop_watching()
        _register_cupy_if_loaded()


class _Watch(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for ``cupy``, asks the finders after it and wraps the loader found."""

    def __init__(self):
        self._finding = threading.local()

    def find_spec(self, fullname, path, target=None):
        if fullname != _WATCHED or getattr(self._finding, "busy", False):
            return None
        self._finding.busy = True
        try:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._finding.busy = False
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _ThenRegister(spec.loader)
        return spec


_watch = _Watch()


def _stop_watching():
    try:
        sys.meta_path.remove(_watch)
    except ValueError:
        pass


def watch():
    """Registers the provider now where CuPy is imported, else once it is."""
    if _WATCHED in sys.modules:
        _register_cupy_if_loaded()
    elif _watch not in sys.meta_path:
        sys.meta_path.insert(0, _watch)
