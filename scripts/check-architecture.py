#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Keeps ARCHITECTURE.md true (ctest -L architecture): every folder of src/ has its paragraph, every
# folder it names exists, no #include crosses folders against its "Dependencies" table, and the
# per-folder libraries of src/CMakeLists.txt (gua_folder_library) link exactly what the table allows.
"""Usage: check-architecture.py [REPOSITORY_ROOT]   (exit 0: true; 1: findings on stderr)"""

import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".def", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_][a-z0-9_]*)/([^"]+)"', re.MULTILINE)
HEADING = re.compile(r"^###\s+`src/([a-z_][a-z0-9_]*)/`\s*$", re.MULTILINE)
NAMED_FOLDER = re.compile(r"\bsrc/([a-z_][a-z0-9_]*)/")
TABLE_MARK = "<!-- architecture:dependencies"
FOLDER_LIBRARY = re.compile(r"^\s*gua_folder_library\(\s*([a-z_][a-z0-9_]*)([^)]*)\)", re.MULTILINE)


def read_table(text):
    """The dependency table: (allowed folders per folder, exported headers, exceptions)."""
    start = text.find(TABLE_MARK)
    if start < 0:
        raise ValueError("ARCHITECTURE.md has no '<!-- architecture:dependencies' table")
    block = re.search(r"```[a-z]*\n(.*?)```", text[start:], re.DOTALL)
    if block is None:
        raise ValueError("the dependency table's code block is missing")
    allowed, exports, exceptions = {}, {}, set()
    for number, line in enumerate(block.group(1).splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        key, sep, rest = line.partition(":")
        if not sep:
            raise ValueError(f"dependency table line {number}: no ':' in {line!r}")
        key, words = key.strip(), rest.split()
        if key == "exception":
            source, arrow, target = rest.strip().partition(" -> ")
            if not arrow:
                raise ValueError(f"dependency table line {number}: 'exception: FILE -> HEADER'")
            exceptions.add((source.strip(), target.strip()))
        elif key.endswith(" exports"):
            exports[key.split()[0]] = set(words)
        else:
            allowed[key] = set(words)
    return allowed, exports, exceptions


def find_cycle(allowed):
    """A cycle among the declared folder edges, as a list of folders, or None."""
    state = {}

    def visit(folder, path):
        state[folder] = "open"
        for dep in sorted(allowed.get(folder, ())):
            if state.get(dep) == "open":
                return path + [folder, dep]
            if dep not in state:
                found = visit(dep, path + [folder])
                if found:
                    return found
        state[folder] = "done"
        return None

    for folder in sorted(allowed):
        if folder not in state:
            found = visit(folder, [])
            if found:
                return found
    return None


def folder_libraries(cmake_text):
    """The folder libraries of src/CMakeLists.txt: their DEPS per folder."""
    libraries = {}
    for folder, args in FOLDER_LIBRARY.findall(cmake_text):
        words = args.split()
        deps = set()
        if "DEPS" in words:
            for word in words[words.index("DEPS") + 1:]:
                if word == "SOURCES":
                    break
                deps.add(word)
        libraries[folder] = deps
    return libraries


def check_libraries(root, folders, allowed):
    """Each folder is a library of src/CMakeLists.txt linking the folders the table allows."""
    findings = []
    libraries = folder_libraries((root / "src" / "CMakeLists.txt").read_text(encoding="utf-8"))
    for folder in folders:
        if folder not in libraries:
            findings.append(f"src/{folder}/ has no gua_folder_library({folder} ...) in "
                            "src/CMakeLists.txt")
        elif folder in allowed and libraries[folder] != allowed[folder]:
            findings.append(f"src/CMakeLists.txt: gua_folder_library({folder}) links "
                            f"{' '.join(sorted(libraries[folder])) or 'nothing'}, but the "
                            f"dependency table says {' '.join(sorted(allowed[folder])) or 'nothing'}")
    for folder in sorted(set(libraries) - set(folders)):
        findings.append(f"src/CMakeLists.txt: gua_folder_library({folder}) names no folder of src/")
    return findings


def includes_of(path):
    try:
        return INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e}") from e


def check(root):
    findings = []
    src = root / "src"
    text = (root / "ARCHITECTURE.md").read_text(encoding="utf-8")
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())
    described = set(HEADING.findall(text))
    for folder in folders:
        if folder not in described:
            findings.append(f"src/{folder}/ has no '### `src/{folder}/`' paragraph")
    for named in sorted(set(NAMED_FOLDER.findall(text))):
        if not (src / named).is_dir():
            findings.append(f"ARCHITECTURE.md names src/{named}/, which does not exist")

    allowed, exports, exceptions = read_table(text)
    for folder in folders:
        if folder not in allowed:
            findings.append(f"src/{folder}/ has no line in the dependency table")
    for folder, deps in sorted(allowed.items()):
        for name in sorted(({folder} | deps) - {"main.cpp"}):
            if not (src / name).is_dir():
                findings.append(f"the dependency table names src/{name}/, which does not exist")
    cycle = find_cycle(allowed)
    if cycle:
        findings.append("the dependency table has a cycle: " + " -> ".join(cycle))

    findings += check_libraries(root, folders, allowed)

    used_exceptions = set()
    for path in sorted(p for p in src.rglob("*") if p.suffix in SOURCE_SUFFIXES and p.is_file()):
        relative = path.relative_to(root).as_posix()
        parts = path.relative_to(src).parts
        folder = parts[0]  # "main.cpp" for the files directly in src/
        for target, rest in includes_of(path):
            if target == folder or not (src / target).is_dir():
                continue  # its own folder, or a library's header ("fmt/format.h")
            header = f"{target}/{rest}"
            if (relative, header) in exceptions:
                used_exceptions.add((relative, header))
                continue
            if target not in allowed.get(folder, set()):
                findings.append(f"{relative}: includes {header}, but {folder} may not depend on "
                                f"{target} (ARCHITECTURE.md, Dependencies)")
            elif target in exports and rest not in exports[target]:
                findings.append(f"{relative}: includes {header}; other folders may include only "
                                f"{', '.join(sorted(exports[target]))} of src/{target}/")
    for source, header in sorted(exceptions - used_exceptions):
        findings.append(f"exception '{source} -> {header}' is no longer needed: remove it from "
                        "ARCHITECTURE.md")
    return findings


def main(argv):
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent)
    try:
        findings = check(root)
    except (OSError, ValueError) as e:
        print(f"check-architecture: {e}", file=sys.stderr)
        return 1
    for finding in findings:
        print(f"check-architecture: {finding}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
