#!/usr/bin/env python3
"""make_vjp_cases.py [make | check DUMP REF]

make (Debian's python3-torch 1.13; the outputs are committed): for each
vision op, a model whose one parameter `x` (and the op's own weights) feed
the op, and whose output `loss` is the sum of the op's result times a
random input `r` (so every element of the result is weighted apart):
  vjp/<case>/model.onnx, vjp/<case>/batch/r.npy
  vjp/<case>/fd/<param>.npy   d loss / d param by central finite
                              differences of the same model in float64
                              (PyTorch's forward; no autograd)
check (numpy only): compares the gradients dtc dumped (DUMP/grad/<param>.npy)
with REF/<param>.npy: relative L2 error at most 1e-4. Prints one line per
parameter and exits 1 if any fails.
"""
import os
import sys

import numpy as np

def cases():
    import torch
    from torch import nn

    class Case(nn.Module):
        def __init__(self, op, shape):
            super().__init__()
            self.x = nn.Parameter(torch.randn(*shape))
            self.op = op

        def forward(self, r):
            return (self.op(self.x) * r).sum()

    def perturbed(module):
        with torch.no_grad():
            for p in module.parameters():
                p.add_(0.3 * torch.randn_like(p))
        return module

    return Case, {
        "conv2d": (lambda: perturbed(nn.Conv2d(4, 6, (3, 2), (2, 1), (1, 0), (1, 2), groups=2)),
                   (2, 4, 7, 8)),
        "conv1d": (lambda: nn.Conv1d(3, 4, 3, 2, 1), (2, 3, 9)),
        "conv3d_depthwise": (lambda: nn.Conv3d(3, 6, 2, 1, 1, groups=3, bias=False),
                             (1, 3, 3, 4, 3)),
        "patch_conv": (lambda: nn.Conv2d(3, 5, 4, 4), (2, 3, 8, 9)),
        "conv_transpose2d": (lambda: nn.ConvTranspose2d(4, 6, 3, 2, 1, 1, groups=2),
                             (2, 4, 3, 4)),
        "max_pool2d": (lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True), (2, 3, 6, 7)),
        "avg_pool2d": (lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
                       (2, 3, 6, 7)),
        "avg_pool1d_pad": (lambda: nn.AvgPool1d(3, 2, 1), (2, 3, 8)),
        "global_avg_pool": (lambda: nn.AdaptiveAvgPool2d(1), (2, 3, 4, 5)),
        "batch_norm": (lambda: perturbed(nn.BatchNorm2d(3)), (4, 3, 3, 2)),
        "instance_norm": (lambda: perturbed(nn.InstanceNorm2d(3, affine=True)), (2, 3, 4, 3)),
        "leaky_relu": (lambda: nn.LeakyReLU(0.2), (2, 3, 4)),
        "elu": (lambda: nn.ELU(0.7), (2, 3, 4)),
        "selu": (lambda: nn.SELU(), (2, 3, 4)),
        "prelu": (lambda: perturbed(nn.PReLU(3)), (2, 3, 4)),
    }


def make(root):
    import torch
    Case, table = cases()
    for name, (op, shape) in table.items():
        torch.manual_seed(len(name))
        model = Case(op(), shape).train()
        r = torch.randn_like(model.op(model.x))
        out = os.path.join(root, name)
        os.makedirs(out + "/batch", exist_ok=True)
        os.makedirs(out + "/fd", exist_ok=True)
        np.save(out + "/batch/r.npy", r.detach().numpy())
        torch.onnx.export(model, (r,), out + "/model.onnx", input_names=["r"],
                          output_names=["loss"], opset_version=17,
                          do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
        double = Case(op(), shape).double().train()
        double.load_state_dict(model.state_dict())
        r64 = r.double()
        h = 1e-6
        with torch.no_grad():
            for pname, p in double.named_parameters():
                grad = np.zeros(p.shape)
                flat = p.view(-1)
                for i in range(flat.numel()):
                    saved = flat[i].item()
                    flat[i] = saved + h
                    up = double(r64).item()
                    flat[i] = saved - h
                    down = double(r64).item()
                    flat[i] = saved
                    grad.reshape(-1)[i] = (up - down) / (2 * h)
                np.save(f"{out}/fd/{pname}.npy", grad.astype(np.float32))
        print(f"{name}: {sum(p.numel() for p in model.parameters())} parameters")


def check(dump, ref):
    failures = 0
    for name in sorted(os.listdir(ref)):
        g = np.load(os.path.join(dump, "grad", name)).astype(np.float64)
        e = np.load(os.path.join(ref, name)).astype(np.float64)
        err = np.linalg.norm(g - e) / np.linalg.norm(e) if g.shape == e.shape else np.inf
        ok = err <= 1e-4
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} grad {name[:-4]:12} vs finite differences: rel L2 {err:.2e}")
    print(f"{failures} failed")
    return 1 if failures else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    if len(sys.argv) <= 2 and (len(sys.argv) == 1 or sys.argv[1] == "make"):
        make(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vjp"))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
