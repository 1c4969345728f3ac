"""Parses JSON documents with Python's json module, for the differential test of JSONValue's parser.

Usage: json_oracle.py CORPUS

CORPUS has one document per line, as the hex of its bytes. For each, one line is printed:
"ok TOKENS" with the parsed value as a flat prefix token stream, or "err MESSAGE".

json.loads is configured to follow RFC 8259 where its defaults do not: NaN, Infinity and
-Infinity are refused, and integers of any length are read (no 4300-digit limit). Objects keep
every member in document order, so that repeated keys can be seen.

Tokens, separated by spaces:
  n / t / f          null, true, false
  i:<decimal>        an integer, exactly
  d:<16 hex digits>  a float, as the bits of the IEEE 754 double (inf when a number overflows)
  s:<hex>            a string, as the hex of its code points in UTF-32BE (lone surrogates kept)
  a:<count>          an array, followed by its items
  o:<count>          an object, followed by key and value tokens for each member
"""

import json
import struct
import sys


def refuse_constant(name):
    raise ValueError("non-RFC constant " + name)


class Members(list):
    """An object's members in document order, repeated keys included."""


def string_token(text):
    return "s:" + text.encode("utf-32-be", "surrogatepass").hex()


def tokens(value, out):
    # Iterative, so that the deepest document json.loads accepts can be written.
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None:
            out.append("n")
        elif item is True:
            out.append("t")
        elif item is False:
            out.append("f")
        elif isinstance(item, int):
            out.append("i:%d" % item)
        elif isinstance(item, float):
            out.append("d:" + struct.pack(">d", item).hex())
        elif isinstance(item, str):
            out.append(string_token(item))
        elif isinstance(item, Members):
            out.append("o:%d" % len(item))
            for key, member in reversed(item):
                stack.append(member)
                stack.append(key)
        elif isinstance(item, list):
            out.append("a:%d" % len(item))
            stack.extend(reversed(item))
        else:
            raise TypeError("unexpected %r" % type(item))


def main():
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    with open(sys.argv[1], "r", encoding="ascii") as corpus:
        lines = corpus.read().splitlines()
    results = []
    for line in lines:
        data = bytes.fromhex(line)
        try:
            value = json.loads(data, parse_constant=refuse_constant, object_pairs_hook=Members)
        except (ValueError, RecursionError, UnicodeDecodeError) as error:
            message = " ".join(("%s: %s" % (type(error).__name__, error)).split())
            results.append("err " + message)
            continue
        out = []
        tokens(value, out)
        results.append("ok " + " ".join(out))
    sys.stdout.write("\n".join(results) + "\n")


if __name__ == "__main__":
    main()
