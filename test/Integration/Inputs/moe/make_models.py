#!/usr/bin/env python3
"""Writes the mixture-of-experts fixtures: two-layer GPT-style models whose
MLPs are mixtures of 4 experts with top-2 routing, and PyTorch's three-step
AdamW trajectory for each.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from this
directory:  /usr/bin/python3 make_models.py
For each model, <model>/model.onnx (opset 17), <model>/batch/ (ids and
labels), <model>/initial/ (the parameters before training), <model>/adamw/
(the losses, last gradients and final parameters, as dtc-run --dump writes
them), gshard/capacity-<C>/adamw (the same with capacity C) and
<model>/expert_tokens.npy (how many (token, choice) pairs each
layer's router sends to each expert in the first step, [layers, experts],
before a capacity drops any) and mixtral/routing.npy (the experts chosen
for every token in each step, [steps, layers, tokens, k]).
Models:
  gshard   the GShard/Switch capacity form: TopK, OneHot masks, CumSum
           positions in each expert's buffer (capacity 8 per sequence:
           routing groups are the batch's rows, so a rank's rows route as
           they do on one device), dropped tokens past it, Einsum dispatch
           into stacked expert weights [experts, ...] and Einsum combine.
  gshard-aux  GShard with the Switch Transformer's load-balancing loss as
           a second output, aux_loss; its trajectory trains cross-entropy
           + 0.1 x aux_loss.
  mixtral  the Hugging Face Mixtral loop form (transformers 5): softmax
           router, TopK, then per expert torch.where (NonZero) of its mask,
           a gather of its tokens, its SwiGLU MLP (its slice of the stacked
           expert weights) and index_add_ (ScatterElements) back into the
           output; no capacity (dropless).
The outputs are committed; test/Integration/train-moe.mlir holds the
matching dtc-compile flags.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import make_training_reference as reference  # noqa: E402

VOCAB, DIM, HEADS, SEQ, BATCH, LAYERS = 64, 32, 4, 16, 4, 2
EXPERTS, TOP_K, HIDDEN = 4, 2, 64
CAPACITY = TOP_K * SEQ // EXPERTS  # capacity factor 1 per routing group


class GShardMoE(nn.Module):
    capacity = CAPACITY

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, EXPERTS, bias=False)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, DIM, HIDDEN) * 0.1)
        self.b1 = nn.Parameter(torch.randn(EXPERTS, HIDDEN) * 0.02)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, HIDDEN, DIM) * 0.1)
        self.b2 = nn.Parameter(torch.randn(EXPERTS, DIM) * 0.02)

    def forward(self, x):
        probs = torch.softmax(self.router(x), dim=-1)
        gates, chosen = torch.topk(probs, TOP_K, dim=-1)
        gates = gates / gates.sum(-1, keepdim=True)
        self.chosen = chosen
        combine = torch.zeros(x.shape[0], SEQ, EXPERTS, self.capacity)
        taken = torch.zeros(x.shape[0], 1, EXPERTS, dtype=torch.int64)
        for j in range(TOP_K):
            mask = nn.functional.one_hot(chosen[..., j], EXPERTS)
            # Each token's place in its expert's buffer, after the tokens
            # of the earlier choices (GShard's second-choice offset).
            place = torch.cumsum(mask, dim=1) - 1 + taken
            taken = taken + mask.sum(1, keepdim=True)
            keep = mask * (place < self.capacity).long()
            slot = nn.functional.one_hot((place * keep).sum(-1), self.capacity)
            combine = combine + (gates[..., j, None, None] * keep[..., None]) * slot[:, :, None, :]
        dispatch = (combine > 0).float()
        xe = torch.einsum("bsec,bsm->ebcm", dispatch, x)
        h = nn.functional.gelu(torch.einsum("ebcm,emh->ebch", xe, self.w1) + self.b1[:, None, None])
        ye = torch.einsum("ebch,ehm->ebcm", h, self.w2) + self.b2[:, None, None]
        return torch.einsum("bsec,ebcm->bsm", combine, ye)

    def expert_tokens(self):
        return torch.bincount(self.chosen.flatten(), minlength=EXPERTS)


class MixtralMoE(nn.Module):
    """Hugging Face's Mixtral sparse MoE block as transformers 5 writes it
    (MixtralSparseMoeBlock with MixtralExperts: the experts' SwiGLU weights
    stacked, gate_up_proj [experts, 2 hidden, dim] and down_proj [experts,
    dim, hidden]), looping over every expert rather than over the experts
    the batch hits (a data-dependent loop the exporter would unroll for the
    example batch only)."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(DIM, EXPERTS, bias=False)
        self.gate_up_proj = nn.Parameter(torch.randn(EXPERTS, 2 * HIDDEN, DIM) * 0.1)
        self.down_proj = nn.Parameter(torch.randn(EXPERTS, DIM, HIDDEN) * 0.1)

    def experts(self, hidden_states, top_k_index, top_k_weights):
        final = torch.zeros_like(hidden_states)
        expert_mask = nn.functional.one_hot(top_k_index, EXPERTS).permute(2, 1, 0)
        for e in range(EXPERTS):
            top_k_pos, token_idx = torch.where(expert_mask[e])
            current = hidden_states[token_idx]
            gate, up = nn.functional.linear(current, self.gate_up_proj[e]).chunk(2, dim=-1)
            current = nn.functional.silu(gate) * up
            current = nn.functional.linear(current, self.down_proj[e])
            current = current * top_k_weights[token_idx, top_k_pos, None]
            final.index_add_(0, token_idx, current.to(final.dtype))
        return final

    def forward(self, hidden_states):
        batch, seq, dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, dim)
        routing_weights = torch.softmax(self.gate(hidden_states), dim=1, dtype=torch.float)
        routing_weights, selected = torch.topk(routing_weights, TOP_K, dim=-1)
        routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)
        self.selected = selected
        final = self.experts(hidden_states, selected, routing_weights.to(hidden_states.dtype))
        return final.reshape(batch, seq, dim)

    def expert_tokens(self):
        return torch.bincount(self.selected.flatten(), minlength=EXPERTS)


class GShardAuxMoE(GShardMoE):
    """GShard with the Switch Transformer's load-balancing loss: E x the sum
    over experts of the fraction of the batch's tokens whose first choice
    is the expert times its mean router probability, kept in `aux`."""

    def forward(self, x):
        probs = torch.softmax(self.router(x), dim=-1)
        first = nn.functional.one_hot(torch.topk(probs, 1, dim=-1)[1][..., 0], EXPERTS)
        self.aux = EXPERTS * (first.float().mean((0, 1)) * probs.mean((0, 1))).sum()
        return super().forward(x)


class Block(nn.Module):
    def __init__(self, moe):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.moe = moe()

    def forward(self, x, causal):
        b, t, _ = x.shape
        q, k, v = (part.view(b, t, HEADS, DIM // HEADS).transpose(1, 2)
                   for part in self.qkv(self.ln1(x)).split(DIM, dim=-1))
        scores = q @ k.transpose(-2, -1) / (DIM // HEADS) ** 0.5
        scores = torch.where(causal, scores, torch.tensor(float("-inf")))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, DIM)
        x = x + self.proj(y)
        return x + self.moe(self.ln2(x))


class Model(nn.Module):
    def __init__(self, moe):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(SEQ, DIM)
        self.blocks = nn.ModuleList(Block(moe) for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer("causal", torch.ones(SEQ, SEQ, dtype=torch.bool).tril())

    def forward(self, ids):
        h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            h = block(h, self.causal)
        return self.head(self.ln_f(h))


class AuxModel(Model):
    """The model with its layers' load-balancing losses summed as a second
    output, aux_loss."""

    def forward(self, ids):
        logits = super().forward(ids)
        return logits, sum(block.moe.aux for block in self.blocks)


def build(moe, model_class=Model):
    torch.manual_seed(0)
    model = model_class(moe)
    with torch.no_grad():
        model.wte.weight.normal_(0, 0.5)
        model.wpe.weight.normal_(0, 0.5)
        # Distinct norms (the exporter would merge equal initializers).
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.add_(0.1 * torch.randn(DIM))
                module.bias.add_(0.1 * torch.randn(DIM))
    return model


class Shapes:
    VOCAB = VOCAB


def training_batch():
    """Every fixture's batch: ids from seed 1, labels the next token (the
    last of each row ignored)."""
    torch.manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    return ids, labels


def write(name, moe):
    ids, labels = training_batch()
    reference.save_dir(f"{name}/batch", {"ids": ids, "labels": labels})
    torch.onnx.export(build(moe).eval(), (ids,), f"{name}/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    model = build(moe).train()
    with torch.no_grad():
        model(ids)
    load = torch.stack([block.moe.expert_tokens() for block in model.blocks])
    np.save(f"{name}/expert_tokens.npy", load.numpy().astype(np.int64))
    reference.save_dir(f"{name}/initial", dict(model.named_parameters()))
    reference.train(Shapes, model, reference.OPTIMIZERS["adamw"](model.parameters()), ids,
                    labels, f"{name}/adamw")


def write_capacity(capacity):
    """GShard's trajectory with another capacity (what dtc-compile
    --capacity-factor rewrites the exported one to): the same parameters
    and batch, in gshard/capacity-<C>/adamw."""
    GShardMoE.capacity = capacity
    ids, labels = training_batch()
    model = build(GShardMoE).train()
    reference.train(Shapes, model, reference.OPTIMIZERS["adamw"](model.parameters()), ids,
                    labels, f"gshard/capacity-{capacity}/adamw")
    GShardMoE.capacity = CAPACITY


AUX_COEF = 0.1


def write_aux():
    """gshard-aux: GShard with a load-balancing loss output (aux_loss), and
    PyTorch's trajectory for cross-entropy + AUX_COEF x aux_loss (what
    dtc-compile --aux-loss aux_loss=0.1 trains)."""
    name = "gshard-aux"
    ids, labels = training_batch()
    reference.save_dir(f"{name}/batch", {"ids": ids, "labels": labels})
    torch.onnx.export(build(GShardAuxMoE, AuxModel).eval(), (ids,), f"{name}/model.onnx",
                      input_names=["ids"], output_names=["logits", "aux_loss"], opset_version=17,
                      do_constant_folding=False)
    model = build(GShardAuxMoE).train()
    reference.save_dir(f"{name}/initial", dict(model.named_parameters()))
    reference.train(Shapes, model, reference.OPTIMIZERS["adamw"](model.parameters()), ids,
                    labels, f"{name}/adamw",
                    extra_loss=lambda: AUX_COEF * sum(block.moe.aux for block in model.blocks))


def write_routing():
    """The experts Mixtral's routers choose for every token in each of the
    three training steps, mixtral/routing.npy [steps, layers, tokens, k]:
    how many rows each routing group sends each expert, and so the bytes a
    sorted all-to-all of the filled rows moves."""
    ids, labels = training_batch()
    model = build(MixtralMoE).train()
    chosen = []
    for block in model.blocks:
        block.moe.register_forward_hook(lambda moe, i, o: chosen.append(moe.selected.clone()))
    reference.train(Shapes, model, reference.OPTIMIZERS["adamw"](model.parameters()), ids,
                    labels, "/tmp/mixtral-routing-adamw")
    routing = torch.stack(chosen).reshape(reference.STEPS, LAYERS, BATCH * SEQ, TOP_K)
    np.save("mixtral/routing.npy", routing.numpy().astype(np.int64))


def main():
    os.chdir(HERE)
    write("gshard", GShardMoE)
    write("mixtral", MixtralMoE)
    write_routing()
    write_aux()
    # Capacity factors 0.5 and 2: ceil(factor x 2 choices x 16 tokens / 4).
    write_capacity(4)
    write_capacity(16)


if __name__ == "__main__":
    main()
