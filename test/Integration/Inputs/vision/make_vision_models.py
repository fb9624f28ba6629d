#!/usr/bin/env python3
"""Writes two small vision models and PyTorch's training steps on them.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from anywhere:
  /usr/bin/python3 make_vision_models.py
  resnet/  a ResNet-style classifier: a stem convolution, training-mode
           batch norm, ReLU and max pool, a basic residual block, a strided
           block with a 1x1 projection shortcut, global average pool, a
           linear head (exported in training mode: the batch norms use the
           batch's statistics and update their running ones)
  vit/     a ViT-style classifier: a patch convolution (stride = kernel),
           a class token, a learned position embedding, two pre-norm
           transformer blocks, a linear head on the class token
Each as the training fixtures are (Inputs/hf/make_hf_models.py):
  <model>/model.onnx             pixels [BATCH, 3, 16, 16] -> logits [BATCH, 10]
  <model>/batch/{pixels,labels}.npy
  <model>/initial/<name>.npy     parameters (and buffers) before training
  <model>/adamw/                 loss.npy, grad/ (last step), param/ (the
                                 parameters and the batch norms' running
                                 statistics after three AdamW steps)
  resnet/adamw-per-rank-dp2/     the same as PyTorch's DistributedDataParallel
                                 without SyncBatchNorm trains it on 2 ranks
The outputs are committed, so the tests need no framework.
"""
import os
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from torch import nn
from torch.nn.utils.stateless import functional_call

BATCH, CLASSES, SIZE = 4, 10, 16
STEPS = 3


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.block1 = BasicBlock(8, 8, 1)
        self.block2 = BasicBlock(8, 16, 2)
        self.head = nn.Linear(16, CLASSES)

    def forward(self, pixels):
        x = self.pool(torch.relu(self.bn(self.conv(pixels))))
        x = self.block2(self.block1(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


DIM, HEADS, PATCH = 32, 4, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 2 * DIM)
        self.out = nn.Linear(2 * DIM, DIM)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=-1)
        heads = lambda z: z.view(b, t, HEADS, d // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // HEADS) ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self):
        super().__init__()
        patches = (SIZE // PATCH) ** 2
        self.patch = nn.Conv2d(3, DIM, PATCH, PATCH)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, DIM))
        self.pos = nn.Parameter(0.02 * torch.randn(1, patches + 1, DIM))
        self.blocks = nn.Sequential(Block(), Block())
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, pixels):
        x = self.patch(pixels).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.ln(self.blocks(x))
        return self.head(x[:, 0])


def save_dir(path, tensors):
    os.makedirs(path, exist_ok=True)
    for name, tensor in tensors.items():
        np.save(os.path.join(path, name + ".npy"), tensor.detach().numpy())


def state(model):
    """Parameters and the batch norms' running statistics, by name (the
    counter num_batches_tracked has no ONNX counterpart)."""
    tensors = dict(model.named_parameters())
    tensors.update((n, b) for n, b in model.named_buffers() if "running_" in n)
    return {n: t.detach().clone() for n, t in tensors.items()}


def make(name, model, per_rank_groups=1):
    os.makedirs(name, exist_ok=True)
    with torch.no_grad():  # non-trivial norms
        for module in model.modules():
            if isinstance(module, (nn.BatchNorm2d, nn.LayerNorm)):
                module.weight.add_(0.1 * torch.randn_like(module.weight))
                module.bias.add_(0.1 * torch.randn_like(module.bias))
    pixels = torch.randn(BATCH, 3, SIZE, SIZE)
    labels = torch.randint(0, CLASSES, (BATCH,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.train(), (pixels,), f"{name}/model.onnx",
                          input_names=["pixels"], output_names=["logits"],
                          opset_version=17, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
    # Tracing ran the model once in training mode, and the model file holds
    # the running statistics it left: training starts from the file's.
    stored = {t.name: onnx.numpy_helper.to_array(t)
              for t in onnx.load(f"{name}/model.onnx").graph.initializer}
    with torch.no_grad():
        for n, b in model.named_buffers():
            if "running_" in n:
                b.copy_(torch.from_numpy(stored[n].copy()))
    initial = state(model)
    for n, t in initial.items():
        assert np.array_equal(stored[n], t.numpy()), n
    save_dir(f"{name}/batch", {"pixels": pixels, "labels": labels})
    save_dir(f"{name}/initial", initial)
    start = {n: t.clone() for n, t in model.state_dict().items()}
    train(model, pixels, labels, f"{name}/adamw", groups=1)
    if per_rank_groups > 1:
        model.load_state_dict(start)
        train(model, pixels, labels, f"{name}/adamw-per-rank-dp{per_rank_groups}",
              groups=per_rank_groups)


def train(model, pixels, labels, out, groups):
    """STEPS AdamW steps, recorded in out/. With groups > 1, as PyTorch's
    DistributedDataParallel without SyncBatchNorm on that many ranks: each
    rank's rows (a group) normalized by their own statistics, the gradients
    averaged, and the running statistics rank 0's (DDP broadcasts rank 0's
    buffers before every forward)."""
    params = dict(model.named_parameters())
    optimizer = torch.optim.AdamW(params.values(), lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.01)
    rows = BATCH // groups
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = 0
        for g in range(groups):
            part = slice(g * rows, (g + 1) * rows)
            if g == 0:
                logits = model(pixels[part])
            else:  # on copies of the buffers, which are not kept
                copies = {n: b.clone() for n, b in model.named_buffers()}
                logits = functional_call(model, {**params, **copies}, (pixels[part],))
            loss = loss + nn.functional.cross_entropy(logits, labels[part]) / groups
        loss.backward()
        losses.append(loss.item())
        grads = {n: p.grad.clone() for n, p in params.items()}
        optimizer.step()
    os.makedirs(out, exist_ok=True)
    np.save(f"{out}/loss.npy", np.array(losses, np.float32))
    save_dir(f"{out}/grad", grads)
    save_dir(f"{out}/param", state(model))
    print(f"{out}: {sum(p.numel() for p in params.values())} parameters, "
          f"losses {', '.join(f'{l:.6f}' for l in losses)}")


def main():
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    torch.manual_seed(0)
    make("resnet", ResNet(), per_rank_groups=2)
    torch.manual_seed(1)
    make("vit", ViT())


if __name__ == "__main__":
    main()
