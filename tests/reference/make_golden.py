#!/usr/bin/python3
"""Writes the PyTorch reference values that tests/autograd/test_parity.cpp checks against.

Run by hand after changing a case (needs Debian's python3-torch):
    /usr/bin/python3 tests/reference/make_golden.py
For every case it stores the inputs, the output, an upstream gradient W and the gradients
of sum(output * W) with respect to each differentiable input, under "<case>/...".
The C++ side has a case of the same name that must compute the same function.
"""
import math
import os
import zlib

import numpy as np
import torch
import torch.nn.functional as F

from safetensors_io import save

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
rng = np.random.default_rng(2003)


def seed(name):
    """One random stream per case (and per file below): adding or editing a case changes no
    other case's data."""
    global rng
    rng = np.random.default_rng(zlib.crc32(name.encode()))


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def away_from_zero(*shape, low=0.2):
    """Values with |x| >= low: keeps finite differences off kinks (relu) and poles (div)."""
    magnitude = rng.uniform(low, 1.5, shape)
    return (magnitude * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


def positive(*shape):
    return rng.uniform(0.5, 2.0, shape).astype(np.float32)


def separated(*shape):
    """Distinct values at least 0.1 apart, so the max is never a near-tie."""
    values = rng.permutation(int(np.prod(shape))).astype(np.float32) * 0.1 - 1.0
    return values.reshape(shape)


# name -> (inputs, which inputs are differentiable, ids or None, function(tensors, ids))
CASES = {}


def case(name, make_inputs, fn, ids=None, differentiable=None):
    seed(name)
    inputs = make_inputs()
    differentiable = differentiable or [True] * len(inputs)
    CASES[name] = (inputs, differentiable, ids, fn)


case("add_same", lambda: [randn(3, 4), randn(3, 4)], lambda t, _: t[0] + t[1])
case("add_broadcast", lambda: [randn(2, 3, 4), randn(4)], lambda t, _: t[0] + t[1])
case("add_broadcast_both", lambda: [randn(3, 1), randn(1, 4)], lambda t, _: t[0] + t[1])
case("sub_broadcast", lambda: [randn(2, 3), randn(2, 1)], lambda t, _: t[0] - t[1])
case("mul_broadcast", lambda: [randn(2, 3, 4), randn(3, 1)], lambda t, _: t[0] * t[1])
case("div_broadcast", lambda: [randn(3, 4), away_from_zero(4, low=0.5)], lambda t, _: t[0] / t[1])
case("neg", lambda: [randn(3, 4)], lambda t, _: -t[0])
case("add_scalar", lambda: [randn(3, 4)], lambda t, _: t[0] + 2.5)
case("mul_scalar", lambda: [randn(3, 4)], lambda t, _: t[0] * -1.5)
case("pow", lambda: [positive(3, 4)], lambda t, _: t[0] ** 2.5)
case("exp", lambda: [randn(3, 4)], lambda t, _: torch.exp(t[0]))
case("log", lambda: [positive(3, 4)], lambda t, _: torch.log(t[0]))
case("sqrt", lambda: [positive(3, 4)], lambda t, _: torch.sqrt(t[0]))
case("tanh", lambda: [randn(3, 4)], lambda t, _: torch.tanh(t[0]))
case("sigmoid", lambda: [randn(3, 4)], lambda t, _: torch.sigmoid(t[0]))
case("relu", lambda: [away_from_zero(3, 4)], lambda t, _: torch.relu(t[0]))
case("gelu", lambda: [randn(3, 4)], lambda t, _: F.gelu(t[0], approximate="tanh"))
case("matmul_2d", lambda: [randn(3, 4), randn(4, 5)], lambda t, _: t[0] @ t[1])
case("matmul_batched", lambda: [randn(2, 3, 4), randn(2, 4, 5)], lambda t, _: t[0] @ t[1])
case("matmul_broadcast", lambda: [randn(2, 1, 3, 4), randn(3, 4, 2)], lambda t, _: t[0] @ t[1])
case("matmul_shared_rhs", lambda: [randn(2, 3, 4), randn(4, 5)], lambda t, _: t[0] @ t[1])
case("linear", lambda: [randn(2, 3, 4), randn(5, 4), randn(5)], lambda t, _: F.linear(t[0], t[1], t[2]))
case("linear_nobias", lambda: [randn(3, 4), randn(5, 4)], lambda t, _: F.linear(t[0], t[1]))
case("reshape", lambda: [randn(2, 3, 4)], lambda t, _: t[0].reshape(6, -1))
case("permute", lambda: [randn(2, 3, 4)], lambda t, _: t[0].permute(2, 0, 1))
case("transpose", lambda: [randn(2, 3, 4)], lambda t, _: t[0].transpose(1, 2))
case("narrow", lambda: [randn(3, 5, 2)], lambda t, _: t[0].narrow(1, 1, 3))
case("concat", lambda: [randn(2, 3), randn(2, 1), randn(2, 2)], lambda t, _: torch.cat(t, dim=1))
case("stack_middle", lambda: [randn(2, 3), randn(2, 3), randn(2, 3)], lambda t, _: torch.stack(t, dim=1))
case("stack_last", lambda: [randn(2, 3), randn(2, 3)], lambda t, _: torch.stack(t, dim=-1))
case("chunk_uneven", lambda: [randn(2, 7, 2)],
     lambda t, _: torch.cat([c * (i + 1) for i, c in enumerate(t[0].chunk(3, dim=1))], dim=1))
case("unbind", lambda: [randn(2, 3, 4)],
     lambda t, _: torch.stack([u * (i + 1) for i, u in enumerate(t[0].unbind(1))], dim=0))
case("sum_all", lambda: [randn(2, 3, 4)], lambda t, _: t[0].sum())
case("sum_axes_keepdim", lambda: [randn(2, 3, 4)], lambda t, _: t[0].sum(dim=(0, 2), keepdim=True))
case("mean_axis", lambda: [randn(2, 3, 4)], lambda t, _: t[0].mean(dim=1))
case("max_axis", lambda: [separated(3, 5)], lambda t, _: t[0].max(dim=1).values)
case("max_axis0_keepdim", lambda: [separated(4, 3)], lambda t, _: t[0].max(dim=0, keepdim=True).values)
case("softmax_last", lambda: [randn(3, 5)], lambda t, _: torch.softmax(t[0], dim=-1))
case("softmax_axis0", lambda: [randn(3, 4, 2)], lambda t, _: torch.softmax(t[0], dim=0))
case("log_softmax_last", lambda: [randn(3, 5)], lambda t, _: torch.log_softmax(t[0], dim=-1))
case("log_softmax_axis1", lambda: [randn(2, 4, 3)], lambda t, _: torch.log_softmax(t[0], dim=1))
def lstm_cell(gates, c_prev):
    i, f, g, o = gates.chunk(4, dim=1)
    c = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def lstm_two_steps(t):
    h1, c1 = lstm_cell(t[0], t[2])
    h2, c2 = lstm_cell(t[1] + torch.cat([h1] * 4, dim=1), c1)
    return torch.cat([h1, h2 * 2, c2 * 3], dim=1)


case("lstm_cell", lambda: [randn(3, 8), randn(3, 2)],
     lambda t, _: torch.cat(list(map(lambda x, s: x * s, lstm_cell(t[0], t[1]), (1, 2))), dim=1))
case("lstm_cell_two_steps", lambda: [randn(2, 8), randn(2, 8), randn(2, 2)],
     lambda t, _: lstm_two_steps(t))
case("layer_norm", lambda: [randn(2, 3, 8), 1.0 + 0.1 * randn(8), 0.1 * randn(8)],
     lambda t, _: F.layer_norm(t[0], (8,), t[1], t[2], eps=1e-5))
repeated_ids = np.array([[1, 4, 1, 0, 5], [4, 4, 2, 1, 3]], dtype=np.int64)
case("embedding", lambda: [randn(6, 4)], lambda t, ids: F.embedding(ids, t[0]), ids=repeated_ids)
case("embedding_sparse", lambda: [randn(6, 4)], lambda t, ids: F.embedding(ids, t[0]), ids=repeated_ids)
column_mask = np.array([[0, 1, 0, 1]], dtype=np.float32)
case("masked_fill", lambda: [randn(3, 4), column_mask],
     lambda t, _: t[0].masked_fill(t[1] != 0, -5.0), differentiable=[True, False])


def causal(x):
    t, s = x.shape[-2], x.shape[-1]
    keep = torch.ones(t, s, dtype=torch.bool).tril(diagonal=s - t)
    return x.masked_fill(~keep, float("-inf"))


case("causal_softmax", lambda: [randn(2, 4, 4)], lambda t, _: torch.softmax(causal(t[0]), dim=-1))
case("causal_softmax_wide", lambda: [randn(2, 3, 5)], lambda t, _: torch.softmax(causal(t[0]), dim=-1))
targets = np.array([[3, 0, 6], [-100, 2, 6]], dtype=np.int64)
case("cross_entropy", lambda: [randn(2, 3, 7)],
     lambda t, ids: F.cross_entropy(t[0].reshape(-1, 7), ids.reshape(-1), ignore_index=-100),
     ids=targets)


def attention(qkv, heads):
    b, t, c3 = qkv.shape
    c = c3 // 3
    split = lambda z: z.reshape(b, t, heads, c // heads).permute(0, 2, 1, 3)
    q, k, v = (split(z) for z in qkv.split(c, dim=2))
    att = torch.softmax(causal(q @ k.transpose(-2, -1) / math.sqrt(c // heads)), dim=-1)
    return (att @ v).permute(0, 2, 1, 3).reshape(b, t, c)


case("causal_attention", lambda: [randn(2, 5, 12)], lambda t, _: attention(t[0], 2))
def rotary_qk(qkv, heads, base=10000.0):
    """LLaMA's rotation, written out: adjacent columns (2i, 2i + 1) of each head of q and k."""
    b, t, c3 = qkv.shape
    c = c3 // 3
    d = c // heads
    angle = torch.arange(t, dtype=torch.float64)[:, None] / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    cos, sin = torch.cos(angle).float(), torch.sin(angle).float()  # [t, d / 2]

    def rotate(z):
        z = z.reshape(b, t, heads, d // 2, 2)
        x0, x1 = z[..., 0], z[..., 1]
        c_, s_ = cos[None, :, None, :], sin[None, :, None, :]
        return torch.stack([x0 * c_ - x1 * s_, x0 * s_ + x1 * c_], dim=-1).reshape(b, t, c)

    q, k, v = qkv.split(c, dim=2)
    return torch.cat([rotate(q), rotate(k), v], dim=2)


case("rotary_qk", lambda: [randn(2, 5, 24)], lambda t, _: rotary_qk(t[0], 2))
case("causal_attention_separate", lambda: [randn(2, 5, 4), randn(2, 5, 4), randn(2, 5, 4)],
     lambda t, _: attention(torch.cat(t, dim=2), 2))
case("causal_attention_strips", lambda: [randn(1, 70, 12)], lambda t, _: attention(t[0], 2))
case("linear_cross_entropy", lambda: [randn(2, 3, 4), randn(7, 4), randn(7)],
     lambda t, ids: F.cross_entropy(F.linear(t[0], t[1], t[2]).reshape(-1, 7), ids.reshape(-1), ignore_index=-100),
     ids=targets)


def run_case(name, inputs, differentiable, ids, fn, out):
    tensors = [torch.tensor(x, requires_grad=d) for x, d in zip(inputs, differentiable)]
    id_tensor = torch.tensor(ids) if ids is not None else None
    y = fn(tensors, id_tensor)
    seed(name + "/upstream")
    upstream = rng.uniform(-1.0, 1.0, tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(upstream))
    for i, (x, t) in enumerate(zip(inputs, tensors)):
        out[f"{name}/in{i}"] = x
        if t.grad is not None:
            out[f"{name}/grad{i}"] = t.grad.numpy()
    if ids is not None:
        out[f"{name}/ids"] = ids
    out[f"{name}/out"] = y.detach().numpy()
    out[f"{name}/upstream"] = upstream


# ---- composite: a 2-layer GPT-style stack (tied head) with cross-entropy -------------------
VOCAB, WIDTH, HEADS, TIME, BATCH, LAYERS = 11, 8, 2, 5, 2, 2


def block_params():
    p = {"wte": 0.3 * randn(VOCAB, WIDTH), "wpe": 0.3 * randn(TIME, WIDTH),
         "lnf.w": 1 + 0.1 * randn(WIDTH), "lnf.b": 0.1 * randn(WIDTH)}
    for l in range(LAYERS):
        p.update({
            f"h{l}.ln1.w": 1 + 0.1 * randn(WIDTH), f"h{l}.ln1.b": 0.1 * randn(WIDTH),
            f"h{l}.qkv.w": 0.3 * randn(3 * WIDTH, WIDTH), f"h{l}.qkv.b": 0.1 * randn(3 * WIDTH),
            f"h{l}.proj.w": 0.3 * randn(WIDTH, WIDTH), f"h{l}.proj.b": 0.1 * randn(WIDTH),
            f"h{l}.ln2.w": 1 + 0.1 * randn(WIDTH), f"h{l}.ln2.b": 0.1 * randn(WIDTH),
            f"h{l}.fc.w": 0.3 * randn(4 * WIDTH, WIDTH), f"h{l}.fc.b": 0.1 * randn(4 * WIDTH),
            f"h{l}.fcproj.w": 0.3 * randn(WIDTH, 4 * WIDTH), f"h{l}.fcproj.b": 0.1 * randn(WIDTH),
        })
    return p


def block_forward(p, ids, targets):
    b, t = ids.shape
    x = F.embedding(ids, p["wte"]) + p["wpe"][:t]
    for l in range(LAYERS):
        h = F.layer_norm(x, (WIDTH,), p[f"h{l}.ln1.w"], p[f"h{l}.ln1.b"])
        q, k, v = F.linear(h, p[f"h{l}.qkv.w"], p[f"h{l}.qkv.b"]).split(WIDTH, dim=2)
        heads = lambda z: z.reshape(b, t, HEADS, WIDTH // HEADS).permute(0, 2, 1, 3)
        q, k, v = heads(q), heads(k), heads(v)
        att = torch.softmax(causal(q @ k.transpose(-2, -1) / math.sqrt(WIDTH // HEADS)), dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(b, t, WIDTH)
        x = x + F.linear(y, p[f"h{l}.proj.w"], p[f"h{l}.proj.b"])
        h = F.layer_norm(x, (WIDTH,), p[f"h{l}.ln2.w"], p[f"h{l}.ln2.b"])
        h = F.gelu(F.linear(h, p[f"h{l}.fc.w"], p[f"h{l}.fc.b"]), approximate="tanh")
        x = x + F.linear(h, p[f"h{l}.fcproj.w"], p[f"h{l}.fcproj.b"])
    x = F.layer_norm(x, (WIDTH,), p["lnf.w"], p["lnf.b"])
    logits = F.linear(x, p["wte"])  # tied output projection
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def main():
    os.makedirs(GOLDEN, exist_ok=True)
    out = {}
    for name, (inputs, differentiable, ids, fn) in CASES.items():
        run_case(name, inputs, differentiable, ids, fn, out)
    save(os.path.join(GOLDEN, "ops.safetensors"), out, {"torch": torch.__version__})

    seed("block")
    params = block_params()
    ids = rng.integers(0, VOCAB, (BATCH, TIME)).astype(np.int64)
    targets = rng.integers(0, VOCAB, (BATCH, TIME)).astype(np.int64)
    torch_params = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    loss = block_forward(torch_params, torch.tensor(ids), torch.tensor(targets))
    loss.backward()
    block = {"ids": ids, "targets": targets, "loss": np.array(loss.item(), dtype=np.float32)}
    for k, v in params.items():
        block[f"param/{k}"] = v
        block[f"grad/{k}"] = torch_params[k].grad.numpy()
    save(os.path.join(GOLDEN, "block.safetensors"), block, {"torch": torch.__version__})
    extending_golden()
    print(f"wrote {len(CASES)} op cases, the block (loss {loss.item():.6f}) and the extending example to {GOLDEN}")



def extending_golden():
    """docs/extending.md's op, written outside the library (examples/swiglu_gpt): silu."""
    seed("extending")
    x = torch.tensor(2.0 * randn(4, 6), requires_grad=True)
    y = F.silu(x)
    upstream = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    y.backward(torch.tensor(upstream))
    save(os.path.join(GOLDEN, "extending.safetensors"),
         {"silu/x": x.detach().numpy(), "silu/out": y.detach().numpy(), "silu/upstream": upstream,
          "silu/grad_x": x.grad.numpy()},
         {"torch": torch.__version__})


if __name__ == "__main__":
    main()
