"""The probe: turns this machine into a snapshot, with the standard library alone, on Python 3.6+.

It is shipped to servers that have nothing else (``gpuvet fleet`` sends it over SSH to ``python3 -``), so nothing
in this package may import a third-party module at import time or use syntax newer than Python 3.6. Optional
extras (NVIDIA's ``nvidia-ml-py`` binding, imported as ``pynvml``) are used only when importable.
"""
