#!/usr/bin/env python3
"""Kernel cost on ARM on paper: llvm-mca on the decode (GEMV) inner loops of
ember's NEON kernels and of llama.cpp's NEON dot products, per CPU model.

    bench/mca/mca_arm.py [--llama-src DIR] [--ember-src DIR] [--out FILE]

Both are compiled with the aarch64 cross g++/gcc for each -mcpu (Cortex-A53
and A72 without dotprod: ember's ops/qgemm_neon.cpp and llama.cpp's
non-dotprod paths; Cortex-A76 and Neoverse N1 with dotprod:
ops/qgemm_neon_dot.cpp), each kernel's steady-state loop is taken from the
assembly (bench/mca/loops.py: an innermost loop of the function), and llvm-mca
(Debian llvm-14) gives its cycles per iteration. The weights per iteration
come from the int8 products in the loop (sdot of 16 bytes: 16; smull / smull2
/ smlal / smlal2 to 16-bit lanes: 8; scale multiplies are not counted), so the
result is cycles per 32 weights. A model, not a measurement: llvm-mca assumes
every load hits L1 and knows nothing of the memory system; the memory roof is
added separately (docs/PERFORMANCE.md).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loops  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CPUS = [("cortex-a53", False), ("cortex-a72", False), ("cortex-a76", True), ("neoverse-n1", True)]

# (label, ember function, which of the one-token loops): each layout's function
# holds the no-min and the min variants; the shorter is the no-min one.
EMBER = [("Q4_0 (Q4x16)", "QGemmQ4x16", "shortest"),
         ("Q4_1 (Q4x16 + mins)", "QGemmQ4x16", "longest"),
         ("Q4_K (Q4Kx16)", "QGemmQ4Kx16", "shortest"),
         ("Q5_0 (Q5x16)", "QGemmQ5x16", "shortest"),
         ("Q5_K (Q5Kx16)", "QGemmQ5Kx16", "shortest"),
         ("Q3_K (Q3Kx16)", "QGemmQ3Kx16", "shortest"),
         ("Q2_K (Q2Kx16)", "QGemmQ2Kx16", "shortest"),
         ("Q6_K (Q6Kx16)", "QGemmQ6Kx16", "shortest"),
         ("IQ4_NL / IQ4_XS (IQ4x16)", "QGemmIQ4x16", "shortest"),
         ("Q8_0 (Q8x16)", "QGemmQ8x16", "shortest")]

# llama.cpp's dot products (quants.c) and, where it repacks a type for ARM at
# load (repack.cpp, with dotprod), its GEMV over the repacked rows.
LLAMA = [("Q4_0", "ggml_vec_dot_q4_0_q8_0", "quants"),
         ("Q4_0 repacked 4x4", "ggml_gemv_q4_0_4x4_q8_0", "repack"),
         ("Q5_0", "ggml_vec_dot_q5_0_q8_0", "quants"),
         ("Q8_0", "ggml_vec_dot_q8_0_q8_0", "quants"),
         ("Q8_0 repacked 4x4", "ggml_gemv_q8_0_4x4_q8_0", "repack"),
         ("Q4_K", "ggml_vec_dot_q4_K_q8_K", "quants"),
         ("Q4_K repacked 8x8", "ggml_gemv_q4_K_8x8_q8_K", "repack"),
         ("Q6_K", "ggml_vec_dot_q6_K_q8_K", "quants"),
         ("IQ4_NL", "ggml_vec_dot_iq4_nl_q8_0", "quants"),
         ("IQ4_NL repacked 4x4", "ggml_gemv_iq4_nl_4x4_q8_0", "repack"),
         ("IQ4_XS", "ggml_vec_dot_iq4_xs_q8_K", "quants")]


class NoLoop(Exception):
    pass


def int8_macs(ins):
    """int8 x int8 products of one instruction."""
    parts = ins.replace(",", " ").split()
    op = parts[0]
    if op == "sdot" and ".16b" in ins:
        return 16
    if op in ("smull", "smull2", "smlal", "smlal2") and len(parts) > 1 and parts[1].endswith(".8h"):
        return 8
    return 0


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def compile_asm(cmd, out):
    subprocess.run(cmd + ["-S", "-o", out], check=True)
    return open(out).read().splitlines()


def best_loop(lines, fn_part, macs_wanted=None, pick="shortest"):
    """The innermost loop of the function with the most int8 products (the
    main loop; tails and setup loops have fewer), or with exactly macs_wanted
    of them and the fewest (pick="shortest") or most instructions (ember's
    decode loop: one group of 32 columns for one 4-row quad and one token,
    128 products; the loops with more are the prefill token blocks)."""
    fns = loops.functions(lines)
    names = [k for k in fns if fn_part in k]
    if not names:
        raise NoLoop(f"no function matching {fn_part}")
    best = None
    for name in names:
        s, e = fns[name]
        for a, b in loops.loops(lines, s, e):
            body = loops.instructions(lines[a:b + 1])
            macs = sum(int8_macs(ins) for ins in body)
            if macs_wanted is not None:
                shorter = best is None or len(body) < len(best[1])
                longer = best is None or len(body) > len(best[1])
                if macs == macs_wanted and (shorter if pick == "shortest" else longer):
                    best = (macs, body)
            elif macs and (best is None or macs > best[0]):
                best = (macs, body)
    if best is None:
        raise NoLoop(f"no int8 multiply loop in {fn_part}")
    return best


def mca_cycles(body, cpu, tmp):
    path = os.path.join(tmp, "loop.s")
    with open(path, "w") as f:
        f.write("\n".join(body) + "\n")
    out = run(["llvm-mca-14", "-mtriple=aarch64", f"-mcpu={cpu}", "-iterations=200", path])
    total = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    return total / 200.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-src", default=os.path.expanduser(
        "~/.cache/ember/peer/src/llama_cpp_python-0.3.36/vendor/llama.cpp"))
    ap.add_argument("--ember-src", default=REPO, help="the ember tree whose kernels to compile")
    ap.add_argument("--out", default=None, help="write the markdown table here")
    a = ap.parse_args()
    ggml = os.path.join(a.llama_src, "ggml")
    with_llama = os.path.isdir(ggml)
    if not with_llama:
        print(f"mca_arm: no llama.cpp sources at {a.llama_src}: ember's loops only", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cpu, dot in CPUS:
            src = os.path.join(a.ember_src, "ops", "qgemm_neon_dot.cpp" if dot else "qgemm_neon.cpp")
            ember = compile_asm(["aarch64-linux-gnu-g++", "-std=c++20", "-O2", f"-mcpu={cpu}",
                                 "-I", a.ember_src, src], os.path.join(tmp, "e.s"))
            inc = ["-D_GNU_SOURCE", "-I", os.path.join(ggml, "include"), "-I",
                   os.path.join(ggml, "src"), "-I", os.path.join(ggml, "src", "ggml-cpu")]
            arm = os.path.join(ggml, "src", "ggml-cpu", "arch", "arm")
            llama = {} if not with_llama else {
                "quants": compile_asm(["aarch64-linux-gnu-gcc", "-O3", f"-mcpu={cpu}"] + inc +
                                      [os.path.join(arm, "quants.c")], os.path.join(tmp, "l.s")),
                "repack": compile_asm(["aarch64-linux-gnu-g++", "-std=c++17", "-O3",
                                       f"-mcpu={cpu}"] + inc + [os.path.join(arm, "repack.cpp")],
                                      os.path.join(tmp, "r.s")),
            }
            for label, fn, pick in EMBER:
                macs, body = best_loop(ember, fn, macs_wanted=128, pick=pick)
                c = mca_cycles(body, cpu, tmp)
                rows.append((cpu, "ember", label, len(body), macs, c, c * 32 / macs))
            for label, fn, unit in LLAMA if with_llama else []:
                try:
                    macs, body = best_loop(llama[unit], fn)
                except NoLoop:  # the repacked GEMVs are SIMD only with dotprod
                    continue
                c = mca_cycles(body, cpu, tmp)
                rows.append((cpu, "llama.cpp", label, len(body), macs, c, c * 32 / macs))
    lines = ["| CPU | engine | kernel | instructions / iteration | weights / iteration | "
             "cycles / iteration | cycles / 32 weights |", "|---|---|---|---:|---:|---:|---:|"]
    for cpu, eng, label, n, macs, c, c32 in rows:
        lines.append(f"| {cpu} | {eng} | {label} | {n} | {macs} | {c:.1f} | {c32:.2f} |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
