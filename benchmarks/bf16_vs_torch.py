#!/usr/bin/python3
"""bf16 training throughput: tapegrad fp32, tapegrad --precision bf16 and PyTorch under
torch.autocast("cpu", torch.bfloat16), same models, initial parameters and batches,
alternating runs in one invocation (train_vs_torch.py's runners).

    /usr/bin/python3 benchmarks/bf16_vs_torch.py [--repeats 3] [--threads 1,2] [--configs ...]

Tokens/s: the median over the timed steps of a run, then over repeats; peak memory:
/usr/bin/time's maximum resident set size. On a CPU without native bf16 (AVX512_BF16 or
AMX) the table says so instead of a number. Writes results/bf16.json and prints the Markdown
table that render_results.py puts in RESULTS.md.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from render_results import bf16_section
from train_vs_torch import BENCH, CONFIGS, HERE, timed, torch_allocator, torch_env


# GPT-2 small's shape (d768, 12 layers, 12 heads, context 1024, tied, GPT-2's 50,257 tokens), one
# sequence a step: timed over fewer steps (each is about 100 small ones) and at 2 threads only,
# where the target is set.
SHAPES = dict(CONFIGS, **{"gpt2-small": ["--model", "gpt", "--d-model", "768", "--layers", "12", "--heads", "12",
                                         "--context", "1024", "--batch", "1", "--tokenizer", "gpt2", "--tied"]})
STEPS = {"gpt2-small": 5}
THREADS = {"gpt2-small": [2]}


def native_bf16():
    """What the CPU offers for bf16 products, from its flags ("" when nothing)."""
    flags = open("/proc/cpuinfo").read()
    return " and ".join(f for f in ("avx512_bf16", "amx_bf16") if f" {f}" in flags)


def add_utilisation(row, runs):
    """Model FLOPs utilisation of both bf16 sides against the bf16 product rate bench_train
    measured in the same repeat (oneDNN, 2048^3, at the run's threads): PyTorch's at our count of
    the model's FLOPs per token (the same model), so the two shares compare like the tokens/s."""
    flops = runs["bf16"][0]["model_flops_per_token"]
    peaks = [r["reference_gemm"]["bf16_tflops"] for r in runs["bf16"]]
    row["model_flops_per_token"] = flops
    row["bf16_peak_tflops"] = statistics.median(peaks)
    row["bf16"]["mfu"] = statistics.median(r["mfu"] for r in runs["bf16"])
    row["torch_bf16"]["mfu"] = statistics.median(
        flops * r["tokens_per_s"] / (p * 1e12) for r, p in zip(runs["torch_bf16"], peaks))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--configs", default="gpt-tiny,gpt-tiny-tied,gpt-small,gpt-small-tied,gpt2-small")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="bf16_bench_")
    cpu = native_bf16()
    model_name = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    rows = []
    for name in args.configs.split(","):
        for threads in THREADS.get(name, [int(t) for t in args.threads.split(",")]):
            steps = STEPS.get(name, args.steps)
            base = [BENCH] + SHAPES[name] + ["--threads", str(threads), "--steps", str(steps)]
            dump = os.path.join(tmp, f"{name}.st")
            runs = {"fp32": [], "bf16": [], "torch_bf16": []}
            for rep in range(args.repeats):
                runs["fp32"].append(timed(base))
                if cpu:
                    runs["bf16"].append(timed(base + ["--precision", "bf16"] + (["--dump", dump] if rep == 0 else [])))
                    runs["torch_bf16"].append(timed(["/usr/bin/python3", os.path.join(HERE, "torch_train.py"),
                                                     "--dump", dump, "--threads", str(threads)],
                                                    env=torch_env(threads)))
                print(f"{name} threads {threads} repeat {rep + 1}: " +
                      ", ".join(f"{k} {v[-1]['tokens_per_s']:.0f} tok/s" for k, v in runs.items() if v), file=sys.stderr)
            row = {"config": name, "threads": threads, "steps": steps}
            for side, rs in runs.items():
                if rs:
                    row[side] = {"tokens_per_s": statistics.median(r["tokens_per_s"] for r in rs),
                                 "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in rs),
                                 "runs": [r["tokens_per_s"] for r in rs], "losses": rs[0]["losses"],
                                 "kernel": rs[0].get("blas_kernel")}
            if runs["bf16"] and "mfu" in runs["bf16"][0]:
                add_utilisation(row, runs)
            rows.append(row)
    # The fp32 baseline's OpenBLAS kernel (an OPENBLAS_CORETYPE in the environment can choose an
    # older one than OpenBLAS would: benchmarks/HISTORY.md).
    kernel = next((r["fp32"]["kernel"] for r in rows if r["fp32"].get("kernel")), None)
    result = {"benchmark": "bf16_vs_torch", "cpu": model_name, "native_bf16": cpu or None,
              "blas_kernel": kernel, "torch_allocator": torch_allocator(), "repeats": args.repeats,
              "steps": args.steps, "rows": rows}
    with open(os.path.join(args.out, "bf16.json.tmp"), "w") as f:
        json.dump(result, f, indent=2)
    os.replace(os.path.join(args.out, "bf16.json.tmp"), os.path.join(args.out, "bf16.json"))
    print("\n".join(bf16_section(result)))

if __name__ == "__main__":
    main()
