#!/usr/bin/python3
"""The PyTorch side of the training benchmark: the same GPT or NPLM as nn/ (same parameter
names and shapes, dropout off), initialised from the parameters bench_train dumped, trained
on the same batches with AdamW (decay on non-embedding matrices, clip 1.0), timed per step.

    /usr/bin/python3 benchmarks/torch_train.py --dump FILE --threads N

Prints one JSON object like bench_train's. Run it with the thread settings that make PyTorch
fastest (bench.sh sets OMP_NUM_THREADS, MKL_NUM_THREADS and, at 2 threads,
OMP_WAIT_POLICY=PASSIVE).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from safetensors_io import load  # noqa: E402


def causal(x):
    t, s = x.shape[-2], x.shape[-1]
    keep = torch.ones(t, s, dtype=torch.bool).tril(diagonal=s - t)
    return x.masked_fill(~keep, float("-inf"))


def gpt_logits(p, ids, cfg):
    b, t = ids.shape
    c, h = cfg["d_model"], cfg["heads"]
    x = F.embedding(ids, p["wte.weight"]) + p["wpe.weight"][:t]
    for l in range(cfg["layers"]):
        n = f"blocks.{l}."
        y = F.layer_norm(x, (c,), p[n + "ln1.weight"], p[n + "ln1.bias"])
        q, k, v = F.linear(y, p[n + "attn.qkv.weight"], p[n + "attn.qkv.bias"]).split(c, dim=2)
        heads = lambda z: z.reshape(b, t, h, c // h).permute(0, 2, 1, 3)
        q, k, v = heads(q), heads(k), heads(v)
        att = torch.softmax(causal(q @ k.transpose(-2, -1) / math.sqrt(c // h)), dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(b, t, c)
        x = x + F.linear(y, p[n + "attn.proj.weight"], p[n + "attn.proj.bias"])
        y = F.layer_norm(x, (c,), p[n + "ln2.weight"], p[n + "ln2.bias"])
        y = F.gelu(F.linear(y, p[n + "mlp.fc.weight"], p[n + "mlp.fc.bias"]), approximate="tanh")
        x = x + F.linear(y, p[n + "mlp.proj.weight"], p[n + "mlp.proj.bias"])
    x = F.layer_norm(x, (c,), p["ln_f.weight"], p["ln_f.bias"])
    return F.linear(x, p.get("lm_head.weight", p["wte.weight"]))


def nplm_logits(p, ids, cfg):
    b, length = ids.shape
    n = cfg["ngram"]
    t = length - (n - 2)
    windows = ids.unfold(1, n - 1, 1)  # [B, T, n-1]
    x = F.embedding(windows.reshape(b * t, n - 1), p["embedding.weight"]).reshape(b * t, -1)
    y = torch.tanh(F.linear(x, p["hidden.weight"], p["hidden.bias"]))
    out = F.linear(y, p.get("output.weight", p["embedding.weight"]), p["output_bias"])
    if "direct.weight" in p:
        out = out + F.linear(x, p["direct.weight"])
    return out.reshape(b, t, -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--threads", type=int, default=1)
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
    logits_fn = gpt_logits if cfg["model"] == "gpt" else nplm_logits
    is_emb = lambda k: "wte" in k or "wpe" in k or "embedding" in k
    decay = [t for k, t in params.items() if t.dim() >= 2 and not is_emb(k)]
    rest = [t for k, t in params.items() if not (t.dim() >= 2 and not is_emb(k))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]}, {"params": rest, "weight_decay": 0.0}],
                            lr=cfg["lr"])
    warmup = 3
    seconds, losses = [], []
    for s, (ids, targets) in enumerate(batches):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = logits_fn(params, ids, cfg)
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
    print(json.dumps({"side": "pytorch", "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "blas": [line.strip() for line in torch.__config__.show().splitlines() if "BLAS" in line],
                      "tokens_per_step": tokens, "step_seconds": seconds, "losses": losses, "median_step_s": median,
                      "tokens_per_s": tokens / median}))


if __name__ == "__main__":
    main()
