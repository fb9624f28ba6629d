#!/usr/bin/env python3
"""Checks the memory per rank of every configuration in a dtc-plan --json
file against the analytic anatomy of a Llama-3-shaped model (the published
dimensions of bench/llama_shapes.py), trained with AdamW in bf16: 2 bytes
of weight and 2 of gradient per parameter, a 4-byte master copy and two
4-byte moments, plus AdamW's 8-byte step counter.

Megatron's layouts over tp: the q, k, v, gate and up projections split by
output column, the output and down projections by input row, the embedding
and the head by vocabulary row/column (padded to a multiple of tp); the
norms whole. Pipeline stages hold their layers; the first stage the
embedding, the last the final norm and the head (GPipe, 1F1B, ZB-H1: stage
k on pp rank k; interleaved: on rank k mod pp; ZBV: k and 2pp-1-k on rank
k). ZeRO over dp (the ZeRO paper's Psi/N): stage 1 shards the master
weights and moments, stage 2 the gradients too, stage 3 the weights too; a
tensor dp divides in no dimension is padded along its first to a multiple
of dp (stage 1 keeps the whole padded gradient buffer).

usage: check_plan_anatomy.py PLAN.json CONFIG   (CONFIG: llama3-8b, ...)
Prints one line per configuration; exits 1 on any difference.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from llama_shapes import CONFIGS  # noqa: E402


def tensors(config):
    """(name, shape, tp-split dim or None, layer or 'first'/'last')."""
    layers, d, heads, kv, ffn, vocab = CONFIGS[config]
    kv_width = kv * d // heads
    yield "embed", [vocab, d], 0, "first"
    for i in range(layers):
        yield "attn_norm", [d], None, i
        yield "wq", [d, d], 1, i
        yield "wk", [d, kv_width], 1, i
        yield "wv", [d, kv_width], 1, i
        yield "wo", [d, d], 0, i
        yield "mlp_norm", [d], None, i
        yield "w1", [d, ffn], 1, i
        yield "w3", [d, ffn], 1, i
        yield "w2", [ffn, d], 0, i
    yield "norm", [d], None, "last"
    yield "head", [d, vocab], 1, "last"


def zero_shard(shape, split, dp):
    """(shard elements, padded elements) of ZeRO over dp."""
    n = math.prod(shape)
    if dp == 1:
        return n, n
    for prefer_split in (False, True):
        for dim, size in enumerate(shape):
            if (dim == split) == prefer_split and size % dp == 0:
                return n // dp, n
    if split != 0:
        rows = -(-shape[0] // dp)
        return rows * (n // shape[0]), rows * (n // shape[0]) * dp
    return n, n


def expected(plan, config):
    tp, pp, dp, zero = plan["tp"], plan["pp"], plan["dp"], plan["zero"]
    flags = plan["flags"].split()
    split = [CONFIGS[config][0]]
    if "--pipeline-split" in flags:
        split = [int(n) for n in flags[flags.index("--pipeline-split") + 1].split(",")]
    stages = len(split)
    stage_of_layer = [k for k, n in enumerate(split) for _ in range(n)]

    def rank_of(stage):
        if pp == 1:
            return 0
        if plan["schedule"] == "zbv":
            return stage if stage < pp else 2 * pp - 1 - stage
        return stage % pp

    memory = {"parameters": 0, "gradients": 0, "master_weights": 0, "optimizer_state": 8}
    for _, shape, split_dim, layer in tensors(config):
        stage = 0 if layer == "first" else stages - 1 if layer == "last" else stage_of_layer[layer]
        if rank_of(stage) != plan["pp_rank"]:
            continue
        local = list(shape)
        if split_dim is not None and tp > 1:
            local[split_dim] = -(-local[split_dim] // tp)
        n = math.prod(local)
        shard, padded = zero_shard(local, split_dim if tp > 1 else None, dp)
        memory["parameters"] += 2 * (shard if zero >= 3 else n)
        memory["gradients"] += 2 * (shard if zero >= 2 else padded if zero == 1 else n)
        memory["master_weights"] += 4 * (shard if zero >= 1 else n)
        memory["optimizer_state"] += 8 * (shard if zero >= 1 else n)
    return memory


def main():
    plans = json.load(open(sys.argv[1]))["plans"]
    config = sys.argv[2]
    if not plans:
        sys.exit("no configurations in " + sys.argv[1])
    failed = 0
    for plan in plans:
        mine = plan["memory_bytes_per_rank"]
        want = expected(plan, config)
        wrong = [k for k in want if mine[k] != want[k]]
        failed += bool(wrong)
        print(f"{plan['flags']}: " + ("anatomy equal" if not wrong else "DIFFERS: " + ", ".join(
            f"{k} planned {mine[k]}, analytic {want[k]}" for k in wrong)))
    print(f"{len(plans)} configurations, {failed} differ")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
