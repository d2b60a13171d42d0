#!/usr/bin/env python3
"""Runs tools/gpubudget-export once per line of arguments in one Python process (one chroot entry,
one `import torch`), for check_export.py:  export_many.py 'ARGS...' 'ARGS...' ...
Prints one line per job: its exit status, a tab, and the exporter's stderr (lines joined by ' | ')."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader("gpubudget_export", os.path.join(HERE, "../../tools/gpubudget-export"))
spec = importlib.util.spec_from_loader(loader.name, loader)
exporter = importlib.util.module_from_spec(spec)
loader.exec_module(exporter)

for job in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            rc = exporter.main(shlex.split(job))
        except SystemExit as e:  # argparse's usage errors
            rc = e.code
    print(f"{rc}\t{' | '.join(err.getvalue().strip().splitlines())}", flush=True)
