#!/usr/bin/env python3
"""Which real models fit a Raspberry Pi, and how fast they would decode: a
model on paper for docs/RASPBERRY_PI.md, not a measurement.

    bench/pi_model.py [--ctx N] [--pos N]

Memory (per model, weight type and context):
  - weights: every matrix at the weight type's bits per weight as ember keeps
    it after repacking (docs/FORMATS.md: Q4_0 4.5, Q8_0 8.5; exact repacks),
    the token embedding included (a tied output is the same matrix);
  - KV cache: 2 (K and V) x layers x KV heads x head_dim x 2 bytes (f16, the
    default) per token of context (docs/KV.md), q8: 1 byte + a 4-byte scale per
    head;
  - x 1.10 for everything else (activations, tokenizer, code): the measured
    peak RSS was 1.03-1.12x of weights + KV on x86 (docs/PERFORMANCE.md,
    "Memory of the small models").

Decode speed, 4 threads: bytes read per token = every matrix once (a tied
output reads the embedding matrix) + the KV rows of --pos tokens; tok/s =
min(sustained bandwidth, 4 cores' kernel rate) / bytes per token. The kernel
rate per core is bench/mca/mca_arm.py's cycles per 32 weights of ember's
decode loop (docs/PERFORMANCE.md, "ARM on paper") at the board's clock.

Model shapes: the models' published config.json (Hugging Face). Board
figures: see BOARDS below and docs/RASPBERRY_PI.md.
"""
import argparse

MiB = 1024.0 * 1024.0

# name, vocabulary kind, n_embd, layers, heads, KV heads, head_dim, n_ff, vocab, tied output
MODELS = [
    ("SmolLM2-135M-Instruct", "gpt2", 576, 30, 9, 3, 64, 1536, 49152, True),
    ("Qwen2.5-0.5B-Instruct", "gpt2", 896, 24, 14, 2, 64, 4864, 151936, True),
    ("Qwen3-0.6B", "gpt2", 1024, 28, 16, 8, 128, 3072, 151936, True),
    ("TinyLlama-1.1B-Chat", "llama", 2048, 22, 32, 4, 64, 5632, 32000, False),
    ("Llama-3.2-1B-Instruct", "gpt2", 2048, 16, 32, 8, 64, 8192, 128256, True),
    ("Qwen2.5-1.5B-Instruct", "gpt2", 1536, 28, 12, 2, 128, 8960, 151936, True),
    ("Qwen2.5-3B-Instruct", "gpt2", 2048, 36, 16, 2, 128, 11008, 151936, True),
    ("Llama-3.2-3B-Instruct", "gpt2", 3072, 28, 24, 8, 128, 8192, 128256, True),
    ("Qwen2.5-7B-Instruct", "gpt2", 3584, 28, 28, 4, 128, 18944, 152064, False),
    ("Llama-3.1-8B-Instruct", "gpt2", 4096, 32, 32, 8, 128, 14336, 128256, False),
]

# Bits per weight after ember's repacking, and cycles per 32 weights of the
# decode loop per core type (docs/PERFORMANCE.md, llvm-mca table).
TYPES = {
    "Q4_0": (4.5, {"cortex-a53": 33.75, "cortex-a72": 9.30, "cortex-a76": 5.04}),
    "Q8_0": (8.5, {"cortex-a53": 28.75, "cortex-a72": 9.04, "cortex-a76": 4.79}),
}

# board, core, clock GHz, cores, peak GB/s, sustained GB/s (assumed; see the doc)
BOARDS = [
    ("Pi 3 B+", "cortex-a53", 1.4, 4, 4.0, 0.43 * 4.0),
    ("Pi 4", "cortex-a72", 1.8, 4, 12.8, 5.5),
    ("Pi 5", "cortex-a76", 2.4, 4, 17.1, 0.43 * 17.1),
]


def matrix_weights(m):
    """Weights of the matrices decode reads per token, and of all matrices."""
    _, _, d, layers, heads, kv, hd, ff, vocab, tied = m
    per_layer = d * heads * hd * 2 + d * kv * hd * 2 + 3 * d * ff
    embd = vocab * d
    streamed = layers * per_layer + embd  # the output matrix (tied: the embedding)
    total = layers * per_layer + embd * (1 if tied else 2)
    return streamed, total


def kv_bytes_per_token(m, kv_type="f16"):
    _, _, _, layers, _, kv, hd, _, _, _ = m
    if kv_type == "q8":
        return 2 * layers * (kv * hd + 4 * kv)
    return 2 * layers * kv * hd * 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctx", type=int, default=4096, help="context for the memory table")
    ap.add_argument("--pos", type=int, default=512,
                    help="tokens in the context when decoding (their KV rows are read)")
    a = ap.parse_args()

    print(f"Memory at -c {a.ctx} (MiB; weights + KV f16, x1.10):\n")
    print("| model | vocab | params | KV f16 per token | KV at -c %d | Q4_0 total | Q8_0 total |" % a.ctx)
    print("|---|---|---:|---:|---:|---:|---:|")
    for m in MODELS:
        _, total = matrix_weights(m)
        kv = kv_bytes_per_token(m) * a.ctx / MiB
        row = []
        for t in ("Q4_0", "Q8_0"):
            bits = TYPES[t][0]
            row.append((total * bits / 8 / MiB + kv) * 1.10)
        print(f"| {m[0]} | {m[1]} | {total / 1e9:.2f} B | {kv_bytes_per_token(m) / 1024:.0f} KiB "
              f"| {kv:.0f} | {row[0]:.0f} | {row[1]:.0f} |")

    print(f"\nDecode, 4 threads, at position {a.pos} (tok/s, on paper):\n")
    head = "| model | type | MiB per token |" + "".join(f" {b[0]} |" for b in BOARDS)
    print(head)
    print("|---|---|---:|" + "---:|" * len(BOARDS))
    for m in MODELS:
        streamed, _ = matrix_weights(m)
        for t, (bits, cycles) in TYPES.items():
            per_token = streamed * bits / 8 + kv_bytes_per_token(m) * a.pos
            cells = []
            for _, core, ghz, cores, _, sustained in BOARDS:
                weights_per_s = cores * ghz * 1e9 * 32 / cycles[core]
                compute = weights_per_s / streamed
                memory = sustained * 1e9 / per_token
                tps = min(compute, memory)
                cells.append(f"{tps:.1f}{'*' if compute < memory else ''}")
            print(f"| {m[0]} | {t} | {per_token / MiB:.0f} |" + "".join(f" {c} |" for c in cells))
    print("\n(* compute-bound on 4 cores by the llvm-mca kernel rate; otherwise memory-bound)")


if __name__ == "__main__":
    main()
