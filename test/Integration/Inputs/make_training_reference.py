#!/usr/bin/env python3
"""Writes PyTorch's training trajectories for the example models.

Run with Debian's Python (python3-torch 1.13) from this directory:
  /usr/bin/python3 make_training_reference.py
For each example model (examples/tiny_transformer: GPT-2 style;
examples/tiny_llama: Llama style) and optimizer, three steps of PyTorch
autograd + torch.optim on one fixed batch (some labels ignored) are
recorded as the dumps dtc-run writes, under <model>/<optimizer>/:
loss.npy (each step's loss), grad/<param>.npy (last step's gradients) and
param/<param>.npy (parameters after the last step); tiny_transformer/distill/
is AdamW on the knowledge-distillation loss from tiny_transformer/teacher.onnx;
tiny_transformer/schedule/ is five AdamW steps with no decay for biases and
norms, gradient clipping and a warm-up + cosine schedule; <model>/b4/ is
the model exported at batch 4 with a batch of 4 and its AdamW trajectory
(for dp=4). uneven/ is a small language model whose sizes (13, 6, 5) dp=2
and dp=4 do not divide, for ZeRO's padding: its model.onnx, batch/,
initial/ and adamw/.
<model>/batch/ holds the
batch and <model>/initial/ the parameters before training. The outputs are
committed; the matching dtc-compile flags are in test/Integration/train-*.mlir.
"""
import importlib.util
import os

import numpy as np
import torch

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../examples")
MODELS = ["tiny_transformer", "tiny_llama"]
OPTIMIZERS = {
    "adamw": lambda params: torch.optim.AdamW(params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                              weight_decay=0.01),
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01),
}
STEPS = 3
# Knowledge distillation: a teacher of the GPT-2-style architecture with other
# weights, T and alpha as passed to dtc-compile.
TEMPERATURE, ALPHA = 2.0, 0.5


def load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name, "make_model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def save_dir(path, tensors):
    os.makedirs(path, exist_ok=True)
    for name, tensor in tensors.items():
        np.save(os.path.join(path, name + ".npy"), tensor.detach().numpy())


def train(example, model, optimizer, ids, labels, out, teacher=None, steps=STEPS,
          scheduler=None, clip=None, extra_loss=None):
    """Trains; writes the trajectory as dtc-run --dump does. `extra_loss`,
    called after each forward, returns a term added to the loss (a mixture
    of experts' load-balancing loss)."""
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        logits = model(ids).reshape(-1, example.VOCAB)
        loss = torch.nn.functional.cross_entropy(logits, labels.reshape(-1), ignore_index=-100)
        if teacher is not None:
            with torch.no_grad():
                target = torch.softmax(teacher(ids).reshape(-1, example.VOCAB) / TEMPERATURE, -1)
            kl = torch.nn.functional.kl_div(torch.log_softmax(logits / TEMPERATURE, -1), target,
                                            reduction="batchmean") * TEMPERATURE ** 2
            loss = ALPHA * kl + (1 - ALPHA) * loss
        if extra_loss is not None:
            loss = loss + extra_loss()
        loss.backward()
        losses.append(loss.item())
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    os.makedirs(out, exist_ok=True)
    np.save(f"{out}/loss.npy", np.array(losses, np.float32))
    save_dir(f"{out}/grad", grads)
    save_dir(f"{out}/param", dict(model.named_parameters()))


def batch_of_four(model_name, example):
    """dp=4 needs a batch that 4 divides (the exports bake the batch in):
    <model>/b4/ holds the model exported at batch 4, such a batch, and three
    AdamW steps on it from the same initial parameters."""
    out = f"{model_name}/b4"
    torch.manual_seed(2)
    ids = torch.randint(0, example.VOCAB, (4, example.SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[0, -1] = -100
    labels[3, 5] = -100
    save_dir(f"{out}/batch", {"ids": ids, "labels": labels})
    torch.onnx.export(example.build_model(), (ids,), f"{out}/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    model = example.build_model().train()
    train(example, model, OPTIMIZERS["adamw"](model.parameters()), ids, labels, f"{out}/adamw")


class Uneven(torch.nn.Module):
    """Embedding, norm, a GELU projection and an LM head with a bias, sized
    so that neither dp=2 nor dp=4 divides most of the parameters."""
    VOCAB, DIM, HIDDEN, SEQ, BATCH = 13, 6, 5, 3, 4

    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(self.VOCAB, self.DIM)
        self.ln = torch.nn.LayerNorm(self.DIM)
        self.fc = torch.nn.Linear(self.DIM, self.HIDDEN)
        self.head = torch.nn.Linear(self.HIDDEN, self.VOCAB)

    def forward(self, ids):
        h = torch.nn.functional.gelu(self.fc(self.ln(self.wte(ids))))
        return self.head(h)


def uneven():
    torch.manual_seed(3)
    model = Uneven()
    with torch.no_grad():
        model.ln.weight.add_(0.1 * torch.randn(Uneven.DIM))
        model.ln.bias.add_(0.1 * torch.randn(Uneven.DIM))
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    ids = torch.randint(0, Uneven.VOCAB, (Uneven.BATCH, Uneven.SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[1, -1] = -100
    save_dir("uneven/batch", {"ids": ids, "labels": labels})
    save_dir("uneven/initial", initial)
    torch.onnx.export(model.eval(), (ids,), "uneven/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    model.train()
    train(Uneven, model, OPTIMIZERS["adamw"](model.parameters()), ids, labels, "uneven/adamw")


def main():
    uneven()
    for model_name in MODELS:
        example = load_example(model_name)
        torch.manual_seed(1)
        ids = torch.randint(0, example.VOCAB, (example.BATCH, example.SEQ))
        labels = torch.roll(ids, -1, dims=1)
        labels[0, -1] = -100  # ignored tokens
        labels[1, 2] = -100
        save_dir(f"{model_name}/batch", {"ids": ids, "labels": labels})
        save_dir(f"{model_name}/initial", dict(example.build_model().named_parameters()))
        for opt_name, make_optimizer in OPTIMIZERS.items():
            model = example.build_model().train()
            train(example, model, make_optimizer(model.parameters()), ids, labels,
                  f"{model_name}/{opt_name}")
        batch_of_four(model_name, example)
        if model_name == "tiny_transformer":
            torch.manual_seed(7)
            teacher = example.TinyLM().eval()
            torch.onnx.export(teacher, (ids,), f"{model_name}/teacher.onnx", input_names=["ids"],
                              output_names=["logits"], opset_version=17,
                              do_constant_folding=False)
            model = example.build_model().train()
            train(example, model, OPTIMIZERS["adamw"](model.parameters()), ids, labels,
                  f"{model_name}/distill", teacher)
            # No weight decay for biases and norms, gradient clipping, and
            # warm-up then cosine decay, over five steps.
            model = example.build_model().train()
            no_decay = [p for n, p in model.named_parameters() if "bias" in n or "ln" in n]
            decay = [p for n, p in model.named_parameters() if not ("bias" in n or "ln" in n)]
            optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                           {"params": no_decay, "weight_decay": 0.0}], lr=1e-2)
            scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [
                torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.25, total_iters=2),
                torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3, eta_min=1e-3)],
                milestones=[2])
            train(example, model, optimizer, ids, labels, f"{model_name}/schedule", steps=5,
                  scheduler=scheduler, clip=0.5)


if __name__ == "__main__":
    main()
