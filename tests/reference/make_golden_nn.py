#!/usr/bin/python3
"""Reference values for nn/ and optim/ (tests/nn/test_models.cpp, tests/optim/test_optim.cpp).

Run by hand after changing a case (needs Debian's python3-torch):
    /usr/bin/python3 tests/reference/make_golden_nn.py
Writes golden/models.safetensors (tiny GPT tied/untied and NPLM: parameters under the C++
module names, inputs, logits, loss, every gradient, ten AdamW steps' losses; the LSTM and GRU
layers from a given state and two recurrent language models) and golden/optim.safetensors (five-step trajectories of SGD, Adam, AdamW, lazy Adam and AdamW
with clipping and a warm-up + cosine schedule).
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

import torch_models
from safetensors_io import save

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
rng = np.random.default_rng(1948)
torch.set_num_threads(1)


def own_stream(seed):
    global rng
    rng = np.random.default_rng(seed)


def randn(*shape, std=1.0):
    return (std * rng.standard_normal(shape)).astype(np.float32)


# ---- tiny models, parameter names as in nn/ ------------------------------------------------
V, C, H, L, T, B = 13, 8, 2, 2, 6, 2


def gpt_params(tied):
    p = {"wte.weight": randn(V, C, std=0.3), "wpe.weight": randn(T, C, std=0.3),
         "ln_f.weight": 1 + randn(C, std=0.1), "ln_f.bias": randn(C, std=0.1)}
    for l in range(L):
        n = f"blocks.{l}."
        p.update({
            n + "ln1.weight": 1 + randn(C, std=0.1), n + "ln1.bias": randn(C, std=0.1),
            n + "attn.qkv.weight": randn(3 * C, C, std=0.3), n + "attn.qkv.bias": randn(3 * C, std=0.1),
            n + "attn.proj.weight": randn(C, C, std=0.3), n + "attn.proj.bias": randn(C, std=0.1),
            n + "ln2.weight": 1 + randn(C, std=0.1), n + "ln2.bias": randn(C, std=0.1),
            n + "mlp.fc.weight": randn(4 * C, C, std=0.3), n + "mlp.fc.bias": randn(4 * C, std=0.1),
            n + "mlp.proj.weight": randn(C, 4 * C, std=0.3), n + "mlp.proj.bias": randn(C, std=0.1),
        })
    if not tied:
        p["lm_head.weight"] = randn(V, C, std=0.3)
    return p


def gpt_logits(p, ids):
    return torch_models.gpt_logits(p, ids, L, C, H)


NGRAM, M, HID = 4, 6, 5


def nplm_params(tied, direct):
    hidden = M if tied else HID
    p = {"embedding.weight": randn(V, M, std=0.5),
         "hidden.weight": randn(hidden, (NGRAM - 1) * M, std=0.3), "hidden.bias": randn(hidden, std=0.1),
         "output_bias": randn(V, std=0.1)}
    if not tied:
        p["output.weight"] = randn(V, hidden, std=0.3)
    if direct:
        p["direct.weight"] = randn(V, (NGRAM - 1) * M, std=0.3)
    return p


def nplm_logits(p, ids):
    return torch_models.nplm_logits(p, ids, NGRAM)


RNN_HID, RNN_T = 5, 7


def rnn_params(cell, tied, layers):
    gates = 4 if cell == "lstm" else 3
    hidden = M if tied else RNN_HID
    p = {"embedding.weight": randn(V, M, std=0.5), "output_bias": randn(V, std=0.1)}
    for l in range(layers):
        n, width = f"layers.{l}.", M if l == 0 else hidden
        p.update({n + "weight_ih": randn(gates * hidden, width, std=0.4),
                  n + "weight_hh": randn(gates * hidden, hidden, std=0.4),
                  n + "bias_ih": randn(gates * hidden, std=0.1), n + "bias_hh": randn(gates * hidden, std=0.1)})
    if not tied:
        p["output.weight"] = randn(V, hidden, std=0.3)
    return p


def rnn_layer_case(out, name, cell):
    """One layer from a given state: outputs, final state, and the gradients of
    sum(out * U) + sum(h_T * U_h) (+ sum(c_T * U_c)) with respect to everything."""
    gates, width = (4 if cell == "lstm" else 3), 3
    p = {"weight_ih": randn(gates * RNN_HID, width, std=0.4), "weight_hh": randn(gates * RNN_HID, RNN_HID, std=0.4),
         "bias_ih": randn(gates * RNN_HID, std=0.1), "bias_hh": randn(gates * RNN_HID, std=0.1)}
    inputs = {"x": randn(B, RNN_T, width), "h0": randn(1, B, RNN_HID, std=0.5), "c0": randn(1, B, RNN_HID, std=0.5)}
    if cell == "gru":
        del inputs["c0"]
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in {**p, **inputs}.items()}
    state = (tp["h0"], tp["c0"]) if cell == "lstm" else tp["h0"]
    y, last = torch_models.rnn_layer(cell, tp, "", tp["x"], state)
    finals = {"h": last[0], "c": last[1]} if cell == "lstm" else {"h": last}
    upstream = {"out": randn(*y.shape), **{k: randn(*v.shape) for k, v in finals.items()}}
    loss = (y * torch.tensor(upstream["out"])).sum()
    for k, v in finals.items():
        loss = loss + (v * torch.tensor(upstream[k])).sum()
    loss.backward()
    for k, v in {**p, **inputs}.items():
        out[f"{name}/in/{k}"] = v
        out[f"{name}/grad/{k}"] = tp[k].grad.numpy()
    for k, v in upstream.items():
        out[f"{name}/upstream/{k}"] = v
    out[f"{name}/out"] = y.detach().numpy()
    for k, v in finals.items():
        out[f"{name}/final/{k}"] = v.detach().numpy()


def model_case(out, name, params, logits_fn, input_len, targets_len):
    ids = rng.integers(0, V, (B, input_len)).astype(np.int64)
    targets = rng.integers(0, V, (B, targets_len)).astype(np.int64)
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    logits = logits_fn(tp, torch.tensor(ids))
    loss = F.cross_entropy(logits.reshape(-1, V), torch.tensor(targets).reshape(-1))
    loss.backward()
    for k, v in params.items():
        out[f"{name}/param/{k}"] = v
        out[f"{name}/grad/{k}"] = tp[k].grad.numpy()
    out[f"{name}/ids"], out[f"{name}/targets"] = ids, targets
    out[f"{name}/logits"] = logits.detach().numpy()
    out[f"{name}/loss"] = np.array(loss.item(), dtype=np.float32)
    # Ten AdamW steps, decay on matrices that are not embedding tables (optim::decay_groups).
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch.optim.AdamW(torch_models.adamw_groups(tp, 0.1), lr=1e-2)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        l = F.cross_entropy(logits_fn(tp, torch.tensor(ids)).reshape(-1, V), torch.tensor(targets).reshape(-1))
        l.backward()
        opt.step()
        losses.append(l.item())
    out[f"{name}/adamw_losses"] = np.array(losses, dtype=np.float32)


# ---- optimizer trajectories on a tiny embedding + linear problem ----------------------------
STEPS, ROWS = 5, 10


def optim_problem():
    return {"table": randn(ROWS, 4, std=0.5), "weight": randn(3, 4, std=0.5), "bias": randn(3, std=0.1)}


def optim_case(out, name, init, ids, targets, make_opt, schedule=None, clip=None):
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
    sparse = name == "lazy_adam"
    opts = make_opt(tp)
    for step in range(STEPS):
        for o in opts:
            o.zero_grad()
        x = F.embedding(torch.tensor(ids[step]), tp["table"], sparse=sparse)
        loss = F.cross_entropy(F.linear(x, tp["weight"], tp["bias"]), torch.tensor(targets[step]))
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(list(tp.values()), clip)
        if schedule is not None:
            for o in opts:
                for g in o.param_groups:
                    g["lr"] = schedule(step)
        for o in opts:
            o.step()
        for k, t in tp.items():
            out[f"{name}/step{step}/{k}"] = t.detach().numpy().copy()


def warmup_cosine(step, lr=0.05, warmup=2, total=5, min_lr=0.005):
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (1 + math.cos(math.pi * progress)) * (lr - min_lr)


def main():
    os.makedirs(GOLDEN, exist_ok=True)
    models = {}
    model_case(models, "gpt_untied", gpt_params(False), gpt_logits, T, T)
    model_case(models, "gpt_tied", gpt_params(True), gpt_logits, T, T)
    model_case(models, "nplm_direct", nplm_params(False, True), nplm_logits, NGRAM - 2 + 3, 3)
    model_case(models, "nplm_tied", nplm_params(True, False), nplm_logits, NGRAM - 2 + 3, 3)
    optim = {}
    init = optim_problem()
    ids = rng.integers(0, ROWS // 2, (STEPS, 6)).astype(np.int64)  # rows 5..9 never touched
    targets = rng.integers(0, 3, (STEPS, 6)).astype(np.int64)
    for k, v in init.items():
        optim[f"init/{k}"] = v
    optim["ids"], optim["targets"] = ids, targets
    everything = lambda tp: list(tp.values())
    optim_case(optim, "sgd", init, ids, targets,
               lambda tp: [torch.optim.SGD(everything(tp), lr=0.1, momentum=0.9, weight_decay=0.01)])
    optim_case(optim, "adam", init, ids, targets,
               lambda tp: [torch.optim.Adam(everything(tp), lr=0.01, weight_decay=0.01)])
    optim_case(optim, "adamw", init, ids, targets,
               lambda tp: [torch.optim.AdamW(everything(tp), lr=0.01, weight_decay=0.1)])
    optim_case(optim, "lazy_adam", init, ids, targets,
               lambda tp: [torch.optim.SparseAdam([tp["table"]], lr=0.01),
                           torch.optim.AdamW([tp["weight"], tp["bias"]], lr=0.01, weight_decay=0.0)])
    optim_case(optim, "adamw_clip_cosine", init, ids, targets,
               lambda tp: [torch.optim.AdamW(everything(tp), lr=0.05, weight_decay=0.1)],
               schedule=warmup_cosine, clip=0.5)
    save(os.path.join(GOLDEN, "optim.safetensors"), optim, {"torch": torch.__version__})

    # The recurrent cases draw from their own stream, so that they change no case above.
    own_stream(1997)
    rnn_layer_case(models, "lstm_layer", "lstm")
    rnn_layer_case(models, "gru_layer", "gru")
    model_case(models, "lstm_untied", rnn_params("lstm", False, 2),
               lambda p, ids: torch_models.rnn_logits(p, ids, "lstm", 2), RNN_T, RNN_T)
    model_case(models, "gru_tied", rnn_params("gru", True, 1),
               lambda p, ids: torch_models.rnn_logits(p, ids, "gru", 1), RNN_T, RNN_T)
    save(os.path.join(GOLDEN, "models.safetensors"), models, {"torch": torch.__version__})
    print(f"wrote models and optimizer trajectories to {GOLDEN}")


if __name__ == "__main__":
    main()
