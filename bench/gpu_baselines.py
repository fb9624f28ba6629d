#!/usr/bin/env python3
"""PyTorch's side of scripts/gpu-check.sh --full, on the GPU it runs on.

  python3 bench/gpu_baselines.py MODEL --precision {f32,bf16} [--steps N]
  python3 bench/gpu_baselines.py --gemm M N K      (bf16, cuBLASLt)
  python3 bench/gpu_baselines.py --attention B H T D  (causal, bf16)

MODEL is one of bench/step_models.py's (medium_gpt, gpu_gpt): the same
module and batch dtc compiles. Each training step is zero_grad, forward,
cross-entropy, backward and AdamW (betas 0.9/0.999, eps 1e-8, weight
decay 0.01, lr 1e-4: dtc-compile's defaults but the rate), timed as the
median of --steps steps after 3 warm-up steps (torch.compile's compilation
in the warm-up), for eager PyTorch and torch.compile in the modes
max-autotune-no-cudagraphs and reduce-overhead, attention as
F.scaled_dot_product_attention(is_causal=True). bf16 is autocast over f32
parameters (as dtc's --precision bf16 keeps f32 master weights).

Prints one line per mode: `MODE ms/step tokens/s MFU` (MFU: 6 x
parameters + 12 x layers x sequence x dim FLOPs a token, PaLM's count,
of 989 TFLOP/s dense bf16, or 67 TFLOP/s f32 on an H100-class GPU), which
with --dtc-tokens-per-s, dtc-launch-cuda's line (the same count) first
and its ratio to each mode last.
--gemm and --attention time one bf16 product [M, K] x [K, N] (torch.matmul:
cuBLASLt) and SDPA's flash backend forward + backward, in TFLOP/s (causal
attention counted as half the scores, FlashAttention's convention).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import step_models  # noqa: E402

PEAK = {"bf16": 989e12, "f32": 67e12}


def sdpa_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def timed(fn, steps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def train(name, precision, mode, steps):
    step_models.causal_attention = sdpa_attention
    c = step_models.CONFIGS[name]
    model = step_models.build(name).cuda().train()
    ids, labels = (t.cuda() for t in step_models.batch(name))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.999),
                                  eps=1e-8, weight_decay=0.01)
    forward = model if mode == "eager" else torch.compile(model, mode=mode)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = forward(ids)
        loss = F.cross_entropy(logits.float().flatten(0, 1), labels.flatten())
        loss.backward()
        optimizer.step()

    seconds = timed(step, steps)
    tokens = c["batch"] * c["seq"]
    report(mode, tokens / seconds, name, precision, model)
    return tokens / seconds


def report(who, tokens_per_s, name, precision, model):
    c = step_models.CONFIGS[name]
    params = sum(p.numel() for p in model.parameters())
    per_token = 6 * params + 12 * c["layers"] * c["seq"] * c["dim"]
    seconds = c["batch"] * c["seq"] / tokens_per_s
    print(f"{who:28s} {seconds * 1e3:9.2f} ms/step {tokens_per_s:11.0f} tokens/s "
          f"MFU {100 * per_token * tokens_per_s / PEAK[precision]:5.1f}%", flush=True)


def gemm(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    seconds = timed(lambda: a @ b, 20)
    print(f"cuBLASLt bf16 GEMM {m}x{n}x{k}: {2 * m * n * k / seconds / 1e12:.1f} TFLOP/s")


def attention(b, h, t, d):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    grad = torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16)

    def both():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(grad)

    seconds = timed(both, 20)
    # Forward 2 products of 2 b h t t d FLOPs, backward 2.5 times that;
    # causal: half the scores (dtc-launch-cuda --profile counts them all:
    # its fused kernels compute the masked ones too).
    flops = 3.5 * 4 * b * h * t * t * d
    print(f"SDPA flash causal fwd+bwd {b}x{h}x{t}x{d}: {seconds * 1e3:.3f} ms, "
          f"{flops / 2 / seconds / 1e12:.1f} TFLOP/s (causal half), "
          f"{flops / seconds / 1e12:.1f} counting every score")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", choices=sorted(step_models.CONFIGS))
    parser.add_argument("--precision", choices=sorted(PEAK), default="bf16")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--modes", default="eager,max-autotune-no-cudagraphs,reduce-overhead")
    parser.add_argument("--gemm", type=int, nargs=3, metavar=("M", "N", "K"))
    parser.add_argument("--attention", type=int, nargs=4, metavar=("B", "H", "T", "D"))
    parser.add_argument("--dtc-tokens-per-s", type=float,
                        help="dtc-launch-cuda's throughput on MODEL: printed with its MFU "
                             "(the same count) and its ratio to each mode")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_baselines.py: no CUDA device")
    if args.gemm:
        gemm(*args.gemm)
    if args.attention:
        attention(*args.attention)
    if args.model:
        print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}: "
              f"{args.model}, {args.precision}")
        if args.dtc_tokens_per_s:
            with torch.device("meta"):
                shapes = step_models.GPT(step_models.CONFIGS[args.model])
            report("dtc-launch-cuda", args.dtc_tokens_per_s, args.model, args.precision, shapes)
        rates = {mode: train(args.model, args.precision, mode, args.steps)
                 for mode in args.modes.split(",")}
        if args.dtc_tokens_per_s:
            print("dtc's tokens/s over: " + ", ".join(
                f"{mode} {args.dtc_tokens_per_s / rate:.2f}x" for mode, rate in rates.items()))


if __name__ == "__main__":
    main()
