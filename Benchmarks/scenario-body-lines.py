#!/usr/bin/env python3
"""Counts the lines of every scenario body: the trailing closure of `Scenario(...) { run in ... }`
in scenarios/**/*.swift (the lines strictly between `{ run in` and its closing brace, blank lines
and comment-only lines left out, unless --all), and prints each count, the median and the mean.

Usage: Benchmarks/scenario-body-lines.py [--all] [DIR]   (default: scenarios)
"""
import pathlib
import statistics
import sys


def body_lines(text, count_all=False):
    """Yields (start line, lines) for each `{ run in` closure of `text`."""
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        if lines[index].rstrip().endswith("{ run in"):
            depth, end = 1, None
            in_block = False  # inside a """ string
            for number in range(index + 1, len(lines)):
                depth, in_block = scan(lines[number], depth, in_block)
                if depth == 0:
                    end = number
                    break
            if end is None:
                raise SystemExit(f"unbalanced body at line {index + 1}")
            body = [line.strip() for line in lines[index + 1:end]]
            yield index + 1, sum(1 for line in body if count_all or (line and not line.startswith("//")))
            index = end
        index += 1


def scan(line, depth, in_block):
    """Updates the brace depth over one line, skipping strings and comments."""
    position = 0
    while position < len(line):
        if in_block:
            close = line.find('"""', position)
            if close < 0:
                return depth, True
            in_block, position = False, close + 3
            continue
        if line.startswith('"""', position):
            in_block, position = True, position + 3
            continue
        char = line[position]
        if line.startswith("//", position):
            break
        if char == '"':
            position += 1
            while position < len(line) and line[position] != '"':
                position += 2 if line[position] == "\\" else 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return 0, False
        position += 1
    return depth, in_block


def main():
    arguments = sys.argv[1:]
    count_all = "--all" in arguments
    arguments = [argument for argument in arguments if argument != "--all"]
    root = pathlib.Path(arguments[0] if arguments else "scenarios")
    counts = []
    for path in sorted(root.rglob("*.swift")):
        for line, count in body_lines(path.read_text(), count_all):
            counts.append(count)
            print(f"{count:4d}  {path}:{line}")
    if not counts:
        raise SystemExit("no scenario bodies found")
    print(f"{len(counts)} scenarios: median {statistics.median(counts)} lines, mean {statistics.mean(counts):.1f}")


if __name__ == "__main__":
    main()
