#!/usr/bin/env python3
"""Writes the bundle's test list (tests/manifest, read by run-tests.sh) from ctest's own.

Usage: make_test_manifest.py BUILD_DIR SOURCE_DIR TARGETS_TSV OUTPUT

ctest --show-only=json-v1 names each test's command, arguments, environment, pass/fail
expressions, skip code and timeout. A test goes into the bundle when its program does: a bundled
executable (bin/ or tests/, from TARGETS_TSV) or a host program such as clinfo (looked up on PATH
when the tests run). The ICD loader variables are left out: run-tests.sh points them at the
bundle. Each line holds the fields below separated by 0x1f; list items are separated by 0x1e, and
newlines inside expressions are written as 0x1d. Lines starting with '#' name the tests left out.
"""
import json
import os
import subprocess
import sys

FIELD, ITEM, NEWLINE = "\x1f", "\x1e", "\x1d"


def main() -> int:
    build, source, targets_tsv, output = sys.argv[1:5]
    build, source = os.path.realpath(build), os.path.realpath(source)
    places, unbundled = {}, set()
    for line in open(targets_tsv):
        name, place, path = line.rstrip("\n").split("\t")
        places[os.path.realpath(path)] = (place, name)
        if place == "none":
            unbundled.add(name)
    tests = json.loads(subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                                      capture_output=True, text=True).stdout)["tests"]

    def inside_trees(text: str) -> bool:
        return build in text or source in text

    lines, left_out = [], []
    for test in tests:
        name = test["name"]
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        command = test.get("command") or []
        if not command:  # ctest names no command for a program that was not built
            why = "links LLVM itself (white-box test)" if name in unbundled else "not built"
            left_out.append(f"# {name}: {why}")
            continue
        if "install" in props.get("LABELS", []):
            left_out.append(f"# {name}: installs from the build tree with CMake (label install)")
            continue
        program = os.path.realpath(command[0])
        if program in places:
            place, target = places[program]
            if place == "none":
                left_out.append(f"# {name}: {target} links LLVM itself (white-box test)")
                continue
            program = f"{place}/{target}"
        elif inside_trees(program) or inside_trees(command[0]):
            left_out.append(f"# {name}: runs {os.path.basename(command[0])} from the build tree")
            continue
        else:
            program = "@" + os.path.basename(command[0])  # a host program, e.g. clinfo
        args = command[1:]
        env = [e for e in props.get("ENVIRONMENT", [])
               if not e.startswith(("OCL_ICD_VENDORS=", "OCL_ICD_FILENAMES="))]
        if any(inside_trees(a) for a in args + env):
            left_out.append(f"# {name}: its arguments or environment name the source or build tree")
            continue
        fields = [
            name,
            str(int(props.get("TIMEOUT", 1500))),
            str(props.get("SKIP_RETURN_CODE", "")),
            ITEM.join(env),
            program,
            ITEM.join(args),
            ITEM.join(props.get("PASS_REGULAR_EXPRESSION", [])),
            ITEM.join(props.get("FAIL_REGULAR_EXPRESSION", [])),
        ]
        if any(FIELD in f or "\0" in f for f in fields):
            left_out.append(f"# {name}: a field holds the manifest's separator")
            continue
        lines.append(FIELD.join(f.replace("\n", NEWLINE) for f in fields))
    with open(output, "w") as out:
        out.write("# Duet bundle tests (scripts/bundle/make_test_manifest.py); run by run-tests.sh\n")
        for line in left_out:
            out.write(line + "\n")
        for line in lines:
            out.write(line + "\n")
    print(f"make_test_manifest: {len(lines)} tests, {len(left_out)} left out", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
