#!/usr/bin/env python3
"""How much of a unity file's compile time its headers take: the upper
bound of what precompiled headers could save on it. For each named unity
file of a configured build (compile_commands.json), compiles it as the build
does, then a file holding only the #include lines of its sources (project
and third-party headers, each once) with the same command, and prints both
times. Run it on a quiet machine; each file is compiled twice.

  scripts/bench/ci_header_share.py BUILD-DIR [TARGET ...]

TARGET names a target's first unity file (default: septa_kube septa_http
syncer_test, among the slowest steps of every tree).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

INCLUDE = re.compile(r'\s*#include\s*([<"][^>"]+[>"])')
SOURCE = re.compile(r'#include "([^"]+)"')


def timed(args, cwd):
    begun = time.monotonic()
    subprocess.run(args, cwd=cwd, check=True)
    return time.monotonic() - begun


def headers_of(unity_file):
    """The #include lines of the sources a unity file includes, each once."""
    seen = []
    with open(unity_file) as unity:
        sources = SOURCE.findall(unity.read())
    for source in sources:
        with open(source) as text:
            for line in text:
                match = INCLUDE.match(line)
                if match and match.group(1) not in seen:
                    seen.append(match.group(1))
    return seen


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = sys.argv[1]
    targets = sys.argv[2:] or ["septa_kube", "septa_http", "syncer_test"]
    with open(os.path.join(build, "compile_commands.json")) as commands:
        entries = json.load(commands)
    with tempfile.TemporaryDirectory() as scratch:
        for target in targets:
            suffix = f"/{target}.dir/Unity/unity_0_cxx.cxx"
            entry = next((e for e in entries if e["file"].endswith(suffix)), None)
            if entry is None:
                print(f"{target}: no unity file in {build}", file=sys.stderr)
                continue
            args = shlex.split(entry["command"])
            args[args.index("-o") + 1] = os.path.join(scratch, "out.o")
            whole = timed(args, entry["directory"])
            headers = headers_of(entry["file"])
            only = os.path.join(scratch, "headers.cc")
            with open(only, "w") as text:
                text.writelines(f"#include {h}\n" for h in headers)
            args[args.index("-c") + 1] = only
            alone = timed(args, entry["directory"])
            print(f"{target}: unity file {whole:.1f} s, its {len(headers)} headers alone {alone:.1f} s"
                  f" ({100 * alone / whole:.0f} %)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
