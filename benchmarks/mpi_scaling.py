#!/usr/bin/python3
"""Data-parallel scaling over MPI ranks: training tokens/s of the same global batch on 1 rank
and on 2 ranks (1 OpenBLAS thread each), with and without overlapping the gradient
reduction with backward, and the share of step time each rank spends blocked in
communication. Alternating runs in one invocation; medians over repeats.

    /usr/bin/python3 benchmarks/mpi_scaling.py [--repeats 3] [--configs gpt-tiny,gpt-small] [--steps 20]

Each run is build/bin/bench_train (random Brown windows, AdamW, dropout off); under mpirun every
rank takes its rows of each batch, as train_lm does.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

from train_vs_torch import BENCH, CONFIGS

HERE = os.path.dirname(os.path.abspath(__file__))
# Open MPI refuses to start as root (containers) unless told this is intended.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

VARIANTS = {
    "1 rank": [],
    "2 ranks, overlap": ["mpirun", "-np", "2", "--bind-to", "core"],
    "2 ranks, no overlap": ["mpirun", "-np", "2", "--bind-to", "core"],
}


def run(variant, config, steps):
    cmd = VARIANTS[variant] + [BENCH] + CONFIGS[config] + ["--threads", "1", "--steps", str(steps)]
    if variant.endswith("no overlap"):
        cmd.append("--no-comm-overlap")
    res = subprocess.run(cmd, capture_output=True, text=True, env=MPI_ENV)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--configs", default="gpt-tiny,gpt-small")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if not shutil.which("mpirun"):
        raise SystemExit("mpi_scaling.py: mpirun not found (scripts/setup.sh build installs openmpi-bin)")
    rows = []
    for config in args.configs.split(","):
        if config not in CONFIGS:
            raise SystemExit(f"mpi_scaling.py: unknown config '{config}' (use {', '.join(CONFIGS)})")
        samples = {v: [] for v in VARIANTS}
        for rep in range(args.repeats):
            for variant in VARIANTS:
                r = run(variant, config, args.steps)
                samples[variant].append(r)
                print(f"{config} [{rep + 1}/{args.repeats}] {variant}: {r['tokens_per_s']:,.0f} tok/s, "
                      f"communication {100 * r['comm_fraction']:.1f}% of step time, "
                      f"stop check {100 * r['stop_check_fraction']:.2f}%", flush=True)
        base = statistics.median(s["tokens_per_s"] for s in samples["1 rank"])
        for variant, runs in samples.items():
            tps = statistics.median(s["tokens_per_s"] for s in runs)
            rows.append({"config": config, "variant": variant, "ranks": runs[0]["ranks"],
                         "tokens_per_s": tps, "speedup": tps / base,
                         "comm_fraction": statistics.median(s["comm_fraction"] for s in runs),
                         "stop_check_fraction": statistics.median(s["stop_check_fraction"] for s in runs),
                         "tokens_per_s_runs": [s["tokens_per_s"] for s in runs]})
    out = {"benchmark": "mpi_scaling", "repeats": args.repeats, "steps": args.steps,
           "mpi": subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
           "rows": rows}
    tmp = os.path.join(args.out, "mpi_scaling.json.tmp")
    with open(tmp, "w") as f:
        json.dump(out, f, indent=2)
    os.replace(tmp, os.path.join(args.out, "mpi_scaling.json"))
    print("| model | ranks | tok/s | speed-up | communication | stop check |")
    for r in rows:
        print(f"| {r['config']} | {r['variant']} | {r['tokens_per_s']:,.0f} | {r['speedup']:.2f}x | "
              f"{100 * r['comm_fraction']:.1f}% | {100 * r['stop_check_fraction']:.2f}% |")


if __name__ == "__main__":
    main()
