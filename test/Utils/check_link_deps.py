#!/usr/bin/env python3
"""Checks what dtc's binaries and libraries depend on, so that a stray link
cannot quietly bring MPI into the compiler tools, or protobuf, LLVM/MLIR or
MPI into the runtime library (docs/Architecture.md, Layout). ctest runs it
as `link-dependencies` (test/CMakeLists.txt).

usage: check_link_deps.py --nm NM [--has|--lacks PATTERN FILE...]...

What FILE depends on, by its kind:
  NAME.links  a link closure written by CMake: every library and target the
              target links, directly or not, one a line;
  NAME.a      a static archive: the symbols it refers to that none of its
              members defines, i.e. that whatever links it must bring (nm -C);
  otherwise   an executable or shared library: the shared libraries it
              loads, directly or through another one (ldd).
--has expects at least one of them to match PATTERN (a Python regular
expression, searched for), --lacks none. The --has checks show that each
view sees what the --lacks checks look for: a --lacks check alone would also
pass if the tool behind the view printed nothing useful.
"""

import re
import subprocess
import sys


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{result.stderr}")
    return result.stdout


def link_closure(path):
    with open(path) as f:
        return [line for line in f.read().splitlines() if line]


def shared_libraries(path):
    # One library a line: "name => path (address)" or "path (address)".
    return [line.split()[0] for line in run(["ldd", path]).splitlines()
            if line.strip()]


def external_references(nm, archive):
    # `nm -C` demangles, so a name may hold spaces: it is everything after
    # the type letter ("                 U name", "0000000000000040 T name").
    # Member headers ("Tensor.cpp.o:") and blank lines do not match.
    def symbols(flag):
        names = set()
        for line in run([nm, "-C", flag, archive]).splitlines():
            match = re.match(r"^[0-9a-fA-F]*\s+[A-Za-z]\s+(.*)$", line)
            if match:
                names.add(match.group(1))
        return names

    return sorted(symbols("--undefined-only") - symbols("--defined-only"))


def dependencies(nm, path):
    if path.endswith(".links"):
        return "link closure entries", link_closure(path)
    if path.endswith(".a"):
        return "external symbol references (nm)", external_references(nm, path)
    return "shared libraries (ldd)", shared_libraries(path)


def main(argv):
    if len(argv) < 2 or argv[0] != "--nm":
        sys.exit(__doc__)
    nm, args = argv[1], argv[2:]
    failures = []
    checked = 0
    mode = pattern = None
    i = 0
    while i < len(args):
        if args[i] in ("--has", "--lacks"):
            if i + 1 >= len(args):
                sys.exit(f"error: {args[i]} needs a pattern")
            mode, pattern = args[i], re.compile(args[i + 1])
            i += 2
            continue
        if mode is None:
            sys.exit(f"error: {args[i]}: no --has or --lacks before it")
        path = args[i]
        i += 1
        checked += 1
        what, items = dependencies(nm, path)
        found = [item for item in items if pattern.search(item)]
        if mode == "--has" and not found:
            failures.append(f"{path}: none of its {len(items)} {what} "
                            f"matches '{pattern.pattern}', expected some")
        elif mode == "--lacks" and found:
            shown = "\n    ".join(found[:10])
            if len(found) > 10:
                shown += f"\n    ... and {len(found) - 10} more"
            failures.append(f"{path}: {len(found)} of its {what} match "
                            f"'{pattern.pattern}', expected none:"
                            f"\n    {shown}")
    if checked == 0:
        sys.exit("error: no files to check")
    for failure in failures:
        print(f"FAIL: {failure}")
    if failures:
        return 1
    print(f"{checked} files checked")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
