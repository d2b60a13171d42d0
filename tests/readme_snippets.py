#!/usr/bin/env python3
"""The README's C++ compiles: every ```cpp block that is a whole program (it has `int main`) is
compiled with the project's compiler and warning flags at the compiler's default constexpr limits.

    readme_snippets.py CXX [FLAG ...]     (FLAGs: include directories and warnings, as the build's)
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    cxx, flags = sys.argv[1], sys.argv[2:]
    text = open(os.path.join(ROOT, "README.md")).read()
    programs = [m.group(1) for m in re.finditer(r"```cpp\n(.*?)```", text, re.S) if "int main" in m.group(1)]
    if not programs:
        raise SystemExit("no C++ program found in README.md")
    with tempfile.TemporaryDirectory() as tmp:
        for k, code in enumerate(programs):
            path = os.path.join(tmp, "readme_%d.cpp" % k)
            open(path, "w").write(code)
            done = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I" + os.path.join(ROOT, "include")] + flags + [path],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit("README program %d does not compile with %s:\n%s" % (k + 1, cxx, done.stderr[-3000:]))
    print("%d README programs compile with %s" % (len(programs), cxx))


if __name__ == "__main__":
    main()
