"""Innermost loops of a function in GNU aarch64 assembly (gcc or clang -S):
a label followed later in the same function by a branch back to it, with no
other such loop inside. Used by bench/mca/mca_arm.sh to hand each kernel's
steady-state loop body to llvm-mca."""
import re
import sys
from collections import Counter

COND = r"(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)"
BRANCH = re.compile(r"^\s*(b(?:\.?" + COND + r")?|cbn?z|tbn?z)\s+(?:[^,]+,\s*)*([.\w]+)\s*$")


def functions(lines):
    """name -> (start, end) line ranges of the functions in the file."""
    out, name, start = {}, None, 0
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z_][\w.$]*):", line)
        if m and not line.startswith(".L"):
            if name:
                out[name] = (start, i)
            name, start = m.group(1), i
    if name:
        out[name] = (start, len(lines))
    return out


def instructions(lines):
    return [l.strip() for l in lines
            if l.strip() and not l.strip().startswith((".", "//", "@", "#")) and not l.strip().endswith(":")]


def loops(lines, start, end):
    """Innermost (label_line, branch_line) pairs within [start, end)."""
    labels = {}
    for i in range(start, end):
        m = re.match(r"^(\.L[\w.]+):", lines[i])
        if m:
            labels[m.group(1)] = i
    found = []
    for i in range(start, end):
        m = BRANCH.match(lines[i])
        if m and m.group(2) in labels and labels[m.group(2)] < i:
            found.append((labels[m.group(2)], i))
    return [(a, b) for a, b in found if not any(a < c and d < b for c, d in found if (c, d) != (a, b))]


def mnemonics(body):
    return Counter(ins.split()[0] for ins in body)


if __name__ == "__main__":
    path, fn = sys.argv[1], sys.argv[2]
    lines = open(path).read().splitlines()
    fns = functions(lines)
    s, e = next(v for k, v in fns.items() if fn in k)
    for a, b in loops(lines, s, e):
        body = instructions(lines[a:b + 1])
        c = mnemonics(body)
        print(a, b, len(body), dict(c.most_common(6)))
