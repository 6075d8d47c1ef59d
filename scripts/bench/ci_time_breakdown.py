#!/usr/bin/env python3
"""Where a CI run's time went: reads build directories after
deploy/dev/test.sh ran in them and prints, per build, the compile and link
time by CMake target (ninja's .ninja_log: its fullest build) and the
slowest tests (ctest's Testing/Temporary/CTestCostData.txt: each test's
average seconds). A step's time is its wall time: ninja runs more steps
than there are cores (4 on 2), so a summed time exceeds both the stage's
elapsed time and its CPU time; it ranks targets, it does not add up to a
stage.

  scripts/bench/ci_time_breakdown.py build build-asan build-tsan [--top N]
"""
import argparse
import collections
import os
import re
import sys


def fullest_build_steps(ninja_log):
    """(seconds, output) per step of the build with the most steps in the
    log (the fresh one, not a later incremental build): ninja appends, and
    a build's first step starts at 0. A step with several outputs (a test's
    link and its gtest listing, `<test>[1]_tests.cmake`, run after the link
    by gtest_discover_tests) has a line per output with the same times and
    hash: it counts once, named by its first output."""
    builds, previous_start = [{}], None
    with open(ninja_log) as log:
        for line in log:
            if line.startswith("#"):
                continue
            start, end, _mtime, output, command_hash = line.rstrip("\n").split("\t")
            start, end = int(start), int(end)
            if previous_start is not None and start == 0 and start < previous_start:
                builds.append({})  # a newer build begins
            previous_start = start
            builds[-1].setdefault((start, end, command_hash), ((end - start) / 1000.0, output))
    return list(max(builds, key=len).values())


TARGET = re.compile(r"CMakeFiles/([^/]+)\.dir/")


def target_of(output):
    """(target, kind): kind is compile (an object file) or link (the rest:
    executables with their gtest listing, libraries, generated files)."""
    match = TARGET.search(output)
    if match and output.endswith(".o"):
        return match.group(1), "compile"
    return os.path.basename(output).split("[")[0], "link"


def report_build(build, top):
    log = os.path.join(build, ".ninja_log")
    if not os.path.exists(log):
        print(f"{build}: no .ninja_log")
        return
    steps = fullest_build_steps(log)
    by_kind = {"compile": collections.Counter(), "link": collections.Counter()}
    for seconds, output in steps:
        target, kind = target_of(output)
        by_kind[kind][target] += seconds
    compile_s, link_s = by_kind["compile"], by_kind["link"]
    total_compile, total_link = sum(compile_s.values()), sum(link_s.values())
    print(f"== {build}: {len(steps)} steps, compile {total_compile:.0f} s, link and generate {total_link:.0f} s"
          " (each summed over steps)")
    print(f"   slowest targets to compile (of {len(compile_s)}):")
    for target, seconds in compile_s.most_common(top):
        print(f"   {seconds:8.1f} s  {100 * seconds / total_compile:5.1f} %  {target}")
    print("   slowest links:")
    for target, seconds in link_s.most_common(min(top, 5)):
        print(f"   {seconds:8.1f} s  {target}")
    slowest = sorted(steps, reverse=True)[: min(top, 5)]
    print("   slowest single steps:")
    for seconds, output in slowest:
        print(f"   {seconds:8.1f} s  {output}")


def report_tests(build, top):
    cost = os.path.join(build, "Testing", "Temporary", "CTestCostData.txt")
    if not os.path.exists(cost):
        print(f"{build}: no CTestCostData.txt")
        return
    tests = []
    with open(cost) as data:
        for line in data:
            if line.startswith("---"):
                break  # the failed tests follow
            parts = line.split()
            if len(parts) == 3:
                tests.append((float(parts[2]), parts[0]))
    tests.sort(reverse=True)
    total = sum(seconds for seconds, _ in tests)
    print(f"== {build}: {len(tests)} tests, {total:.0f} test-seconds")
    for seconds, name in tests[:top]:
        print(f"   {seconds:8.1f} s  {100 * seconds / total:5.1f} %  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("builds", nargs="+")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    for build in args.builds:
        report_build(build, args.top)
        report_tests(build, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
