#!/usr/bin/python3
"""The PyTorch side of the training benchmark: the same GPT or NPLM as nn/ (same parameter
names and shapes, dropout off), initialised from the parameters bench_train dumped, trained
on the same batches with AdamW (decay on non-embedding matrices, clip 1.0), timed per step.
A dump of a bf16 run (its config's "precision") runs forward and loss under
torch.autocast("cpu", torch.bfloat16), PyTorch's own bf16 recipe.

    /usr/bin/python3 benchmarks/torch_train.py --dump FILE --threads N [--warmup-steps 3]

Prints one JSON object like bench_train's. Run it with the settings that make PyTorch fastest
(train_vs_torch.py's torch_env: OMP_NUM_THREADS, MKL_NUM_THREADS, at 2 threads
OMP_WAIT_POLICY=PASSIVE, and jemalloc with decay off as the allocator).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import torch_models  # noqa: E402
from safetensors_io import load  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup-steps", type=int, default=3, help="untimed steps first, as bench_train's")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    data = load(args.dump)
    with open(args.dump, "rb") as f:  # the config is in the header's metadata
        n = int.from_bytes(f.read(8), "little")
        cfg = json.loads(json.loads(f.read(n))["__metadata__"]["config"])
    params = {k[6:]: torch.tensor(np.array(v), requires_grad=True) for k, v in data.items() if k.startswith("param/")}
    steps = len([k for k in data if k.startswith("inputs/")])
    batches = [(torch.tensor(np.array(data[f"inputs/{s}"])), torch.tensor(np.array(data[f"targets/{s}"]))) for s in range(steps)]
    if cfg["model"] == "gpt":
        logits_fn = lambda p, ids: torch_models.gpt_logits(p, ids, cfg["layers"], cfg["d_model"], cfg["heads"])
    else:
        logits_fn = lambda p, ids: torch_models.nplm_logits(p, ids, cfg["ngram"])
    opt = torch.optim.AdamW(torch_models.adamw_groups(params, cfg["weight_decay"]), lr=cfg["lr"])
    bf16 = cfg.get("precision") == "bf16"
    autocast = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)
    warmup = args.warmup_steps
    seconds, losses = [], []
    for s, (ids, targets) in enumerate(batches):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with autocast():
            logits = logits_fn(params, ids)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(params.values()), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        losses.append(loss.item())
        if s >= warmup:
            seconds.append(dt)
    tokens = batches[0][1].numel()
    median = sorted(seconds)[len(seconds) // 2]
    print(json.dumps({"side": "pytorch", "torch": torch.__version__, "autocast_bf16": bf16, "threads": torch.get_num_threads(),
                      "blas": [line.strip() for line in torch.__config__.show().splitlines() if "BLAS" in line],
                      "tokens_per_step": tokens, "step_seconds": seconds, "losses": losses, "median_step_s": median,
                      "tokens_per_s": tokens / median}))


if __name__ == "__main__":
    main()
