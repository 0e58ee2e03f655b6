#!/usr/bin/env python3
"""build_pyz.py - build memory-context-protocol.pyz, the one file a user downloads and runs.

Why it exists: putting the protocol into a repository should not need a clone of this one. The
file this script builds holds install.py, its installer/ package and every file it installs or
reads (hooks, commands, templates, memory_health.py, memory_format.py), the licences, and
launcher.py as its __main__.py; `python3 memory-context-protocol.pyz --project .` then does what
`python3 install.py --project .` does in a clone of the same commit.

What it promises: the same sources give the same bytes (files in a fixed order, with fixed
dates and modes), so a build can be checked against another; standard library only (zipfile);
nothing written but the output file, which appears whole (written beside it, then renamed).

The file is built for each release and attached to it, not committed: every change to a hook or
the installer would otherwise need a second copy kept equal. tests/test_pyz.py builds it in a
temporary folder and runs it beside install.py.

usage: python3 release/build_pyz.py [--output PATH]   (default: dist/memory-context-protocol.pyz)
"""

import argparse
import os
import stat
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "memory-context-protocol.pyz"
SHEBANG = b"#!/usr/bin/env python3\n"
# A fixed date for every entry, so that the build depends on the sources alone.
DATE = (1980, 1, 1, 0, 0, 0)

# What install.py reads, as paths from the repository's top: every Python module beside it (the
# ones install.py and memory_health.py load by path), the licences, and folders taken whole
# (their files, in sorted order, without bytecode).
FILES = ("LICENSE", "NOTICE")
FOLDERS = ("installer", "hooks", "commands", "templates")


def sources(root=ROOT):
    """[(path in the archive, path on disk)] in the archive's order."""
    modules = sorted(name for name in os.listdir(root) if name.endswith(".py"))
    found = [(rel, os.path.join(root, rel)) for rel in modules + list(FILES)]
    for folder in FOLDERS:
        for here, folders, names in os.walk(os.path.join(root, folder)):
            folders[:] = sorted(name for name in folders if name != "__pycache__")
            for name in sorted(names):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(here, name)
                found.append((os.path.relpath(path, root).replace(os.sep, "/"), path))
    return found


def entry(name, data, archive):
    info = zipfile.ZipInfo(name, DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    archive.writestr(info, data)


def build(output, root=ROOT):
    """Write the .pyz to output; returns output."""
    output = os.path.abspath(output)
    folder = os.path.dirname(output)
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix="." + os.path.basename(output) + ".", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(SHEBANG)
            with zipfile.ZipFile(stream, "w") as archive:
                with open(os.path.join(root, "release", "launcher.py"), "rb") as launcher:
                    entry("__main__.py", launcher.read(), archive)
                for name, path in sources(root):
                    with open(path, "rb") as source:
                        entry(name, source.read(), archive)
        os.chmod(temporary, 0o755)
        os.replace(temporary, output)
    except BaseException:
        os.unlink(temporary)
        raise
    return output


def main(argv=None):
    parser = argparse.ArgumentParser(prog="build_pyz.py", description=(
        "Build {}: install.py and what it installs, in one file.".format(NAME)))
    parser.add_argument("--output", default=os.path.join(ROOT, "dist", NAME),
                        help="where to write it (default: dist/{})".format(NAME))
    args = parser.parse_args(argv)
    try:
        path = build(args.output)
    except OSError as error:
        sys.stderr.write("build_pyz.py: error: {}\n".format(error))
        return 1
    print("built {} ({:,} bytes)".format(path, os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
