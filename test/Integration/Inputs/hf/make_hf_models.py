#!/usr/bin/env python3
"""Writes tiny Hugging Face decoder models and PyTorch's training steps on them.

For each family below, a tiny config of the public `transformers` class with
random weights, exported by torch 1.13's exporter (opset 17, as the other
fixtures), and three AdamW steps of PyTorch autograd on one fixed batch,
recorded as dtc-run --dump writes them:
  <family>/model.onnx            the model, ids [BATCH, SEQ] -> logits
  <family>/batch/{ids,labels}.npy
  <family>/initial/<param>.npy   the parameters before training
  <family>/adamw/                loss.npy, grad/ (last step), param/ (after)
The families exercise the layouts issue #24 is about: Falcon's multi-query
fused QKV (Slice and Gather along the head axis), OPT's positions computed
from a baked all-ones mask, BLOOM's per-head Gather from a fused projection,
GPT-BigCode's multi-query split, GPT-NeoX's interleaved fused QKV with
partial rotary, Llama's grouped-query attention.

Needs Debian's Python (python3-torch 1.13) and transformers 4.40 (the last
release that supports torch 1.13), e.g. installed apart:
  pip install --target /work/hf/site --no-deps transformers==4.40.2 \
      tokenizers==0.19.1 safetensors huggingface_hub regex pyyaml tqdm
  PYTHONPATH=/work/hf/site /usr/bin/python3 make_hf_models.py [family...]
The outputs are committed, so the tests download nothing.
"""
import os
import sys
import warnings

import numpy as np
import torch
import transformers

VOCAB, SEQ, BATCH = 64, 8, 4
STEPS = 3


def families():
    t = transformers
    tiny = dict(vocab_size=VOCAB)
    return {
        "falcon_mqa": (t.FalconConfig, t.FalconForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            multi_query=True, new_decoder_architecture=False, parallel_attn=True,
            bias=False, hidden_dropout=0.0, attention_dropout=0.0)),
        "falcon_mha": (t.FalconConfig, t.FalconForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            multi_query=False, new_decoder_architecture=False, parallel_attn=True,
            bias=False, hidden_dropout=0.0, attention_dropout=0.0)),
        "opt": (t.OPTConfig, t.OPTForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            ffn_dim=64, max_position_embeddings=32, word_embed_proj_dim=32,
            dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            layerdrop=0.0)),
        "bloom": (t.BloomConfig, t.BloomForCausalLM, dict(
            tiny, hidden_size=32, n_layer=2, n_head=4, hidden_dropout=0.0,
            attention_dropout=0.0)),
        "gpt_bigcode": (t.GPTBigCodeConfig, t.GPTBigCodeForCausalLM, dict(
            tiny, n_embd=32, n_layer=2, n_head=4, n_positions=32, multi_query=True,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)),
        "gpt_neox": (t.GPTNeoXConfig, t.GPTNeoXForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, max_position_embeddings=32, rotary_pct=0.5,
            hidden_dropout=0.0, attention_dropout=0.0)),
        "llama_gqa": (t.LlamaConfig, t.LlamaForCausalLM, dict(
            tiny, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=64, max_position_embeddings=32)),
    }


class Logits(torch.nn.Module):
    """ids -> logits, without a cache (as a training step runs)."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, ids):
        return self.m(input_ids=ids, use_cache=False).logits


def save_dir(path, tensors):
    os.makedirs(path, exist_ok=True)
    for name, tensor in tensors.items():
        np.save(os.path.join(path, name + ".npy"), tensor.detach().numpy())


def perturb_norms(model):
    """Non-trivial norms, so that their gradients and layouts matter."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() == 1:
                param.add_(0.1 * torch.randn_like(param))


def make_batch():
    """Random ids and next-token labels, two of them ignored (-100)."""
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[0, -1] = -100
    labels[1, 2] = -100
    return ids, labels


def record_training(model, ids, labels, out, names):
    """Writes out/batch, out/initial and out/adamw (STEPS AdamW steps of
    PyTorch autograd: each step's loss, the last step's gradients, the
    parameters after), naming each parameter names[id(param)]."""
    params = list(model.parameters())

    def by_name(tensors):
        return {names[id(p)]: t for p, t in zip(params, tensors)}

    save_dir(f"{out}/batch", {"ids": ids, "labels": labels})
    save_dir(f"{out}/initial", by_name([p.detach().clone() for p in params]))
    model.train()
    optimizer = torch.optim.AdamW(params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.01)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        logits = model(ids).reshape(-1, VOCAB)
        loss = torch.nn.functional.cross_entropy(logits, labels.reshape(-1), ignore_index=-100)
        loss.backward()
        losses.append(loss.item())
        grads = by_name([p.grad.clone() for p in params])
        optimizer.step()
    os.makedirs(f"{out}/adamw", exist_ok=True)
    np.save(f"{out}/adamw/loss.npy", np.array(losses, np.float32))
    save_dir(f"{out}/adamw/grad", grads)
    save_dir(f"{out}/adamw/param", by_name(params))
    print(f"{out}: {sum(p.numel() for p in params)} parameters, "
          f"losses {', '.join(f'{l:.6f}' for l in losses)}")


def make(family, config_class, model_class, options):
    torch.manual_seed(0)
    config = config_class(**options)
    config._attn_implementation = "eager"
    model = Logits(model_class(config))
    perturb_norms(model)
    ids, labels = make_batch()
    os.makedirs(family, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), (ids,), f"{family}/model.onnx", input_names=["ids"],
                          output_names=["logits"], opset_version=17,
                          do_constant_folding=False)
    record_training(model, ids, labels, family,
                    {id(p): n for n, p in model.named_parameters()})


def main():
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    table = families()
    for family in sys.argv[1:] or table:
        make(family, *table[family])


if __name__ == "__main__":
    main()
