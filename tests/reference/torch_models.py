"""The PyTorch reference of nn/'s GPT and NPLM, written once, with the C++ parameter names.
Used by make_golden_nn.py (golden files for the parity tests) and by
benchmarks/torch_train.py (the PyTorch side of the training benchmark)."""
import math

import torch
import torch.nn.functional as F


def causal(x):
    """Masks key j > query i + (S - T) with -inf, as tg::causal_mask."""
    t, s = x.shape[-2], x.shape[-1]
    keep = torch.ones(t, s, dtype=torch.bool).tril(diagonal=s - t)
    return x.masked_fill(~keep, float("-inf"))


def gpt_logits(p, ids, layers, d_model, heads):
    b, t = ids.shape
    c, h = d_model, heads
    x = F.embedding(ids, p["wte.weight"]) + p["wpe.weight"][:t]
    for l in range(layers):
        n = f"blocks.{l}."
        y = F.layer_norm(x, (c,), p[n + "ln1.weight"], p[n + "ln1.bias"])
        q, k, v = F.linear(y, p[n + "attn.qkv.weight"], p[n + "attn.qkv.bias"]).split(c, dim=2)
        split_heads = lambda z: z.reshape(b, t, h, c // h).permute(0, 2, 1, 3)
        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        att = torch.softmax(causal(q @ k.transpose(-2, -1) / math.sqrt(c // h)), dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(b, t, c)
        x = x + F.linear(y, p[n + "attn.proj.weight"], p[n + "attn.proj.bias"])
        y = F.layer_norm(x, (c,), p[n + "ln2.weight"], p[n + "ln2.bias"])
        y = F.gelu(F.linear(y, p[n + "mlp.fc.weight"], p[n + "mlp.fc.bias"]), approximate="tanh")
        x = x + F.linear(y, p[n + "mlp.proj.weight"], p[n + "mlp.proj.bias"])
    x = F.layer_norm(x, (c,), p["ln_f.weight"], p["ln_f.bias"])
    return F.linear(x, p.get("lm_head.weight", p["wte.weight"]))  # tied when there is no lm_head


def nplm_logits(p, ids, ngram):
    """ids: [B, (ngram - 2) + T] -> logits [B, T, V], each from its n-1 preceding words."""
    b, length = ids.shape
    t = length - (ngram - 2)
    windows = ids.unfold(1, ngram - 1, 1)  # [B, T, n-1]
    x = F.embedding(windows.reshape(b * t, ngram - 1), p["embedding.weight"]).reshape(b * t, -1)
    y = torch.tanh(F.linear(x, p["hidden.weight"], p["hidden.bias"]))
    out = F.linear(y, p.get("output.weight", p["embedding.weight"]), p["output_bias"])
    if "direct.weight" in p:
        out = out + F.linear(x, p["direct.weight"])
    return out.reshape(b, t, -1)


def rnn_layer(cell, p, prefix, x, state=None):
    """One layer of PyTorch's own LSTM / GRU kernel (what torch.nn.LSTM and GRU call, batch
    first) with nn/recurrent's parameters p[prefix + name]; state as torch.nn.LSTM / GRU take
    it ([1, B, H] tensors), zeros when None. Returns (outputs, final state) like the modules."""
    weights = [p[prefix + k] for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    hidden = p[prefix + "weight_hh"].shape[1]
    zeros = torch.zeros(1, x.shape[0], hidden)
    args = (True, 1, 0.0, False, False, True)  # biases, layers, dropout, train, bidirectional, batch first
    if cell == "lstm":
        h, c = state if state is not None else (zeros, zeros)
        y, h, c = torch._VF.lstm(x, (h, c), weights, *args)
        return y, (h, c)
    y, h = torch._VF.gru(x, state if state is not None else zeros, weights, *args)
    return y, h


def rnn_logits(p, ids, cell, layers):
    """nn::RNNLM without dropout: embedding, `layers` recurrent layers, output projection."""
    x = F.embedding(ids, p["embedding.weight"])
    for l in range(layers):
        x, _ = rnn_layer(cell, p, f"layers.{l}.", x)
    return F.linear(x, p.get("output.weight", p["embedding.weight"]), p["output_bias"])


def is_embedding(name):
    return "wte" in name or "wpe" in name or "embedding" in name


def adamw_groups(params, weight_decay):
    """optim::decay_groups: decay matrices that are not embedding tables."""
    decay = [t for k, t in params.items() if t.dim() >= 2 and not is_embedding(k)]
    rest = [t for k, t in params.items() if not (t.dim() >= 2 and not is_embedding(k))]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]
