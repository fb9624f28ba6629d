#!/usr/bin/env python3
"""print_step_abi.py OUT/manifest.json

Prints the step ABI description dtc-compile wrote (manifest.json's `step`,
docs/StepABI.md) one line per argument and result, for FileCheck:

  step abi=1 function=train_step loss=0 microbatches=2 mesh=dp=2,tp=2 ...
  argument 1: parameter wte.weight f32[32,32] sharding=[[tp],[]] aliasing_output=18
  argument 20: state exp_avg of wte.weight f32[32,16] ... aliasing_output=19
  result 0: loss f32[]
  result 18: update of argument 1 f32[32,32]
"""
import json
import sys


def tensor(entry):
    text = "%s[%s]" % (entry["dtype"], ",".join(str(n) for n in entry["shape"]))
    layout = entry.get("sharding")
    if layout:
        text += " sharding=[%s]" % ",".join(
            "[%s]" % ",".join(axes) for axes in layout["dims"])
        if "blocks" in layout:
            text += " blocks=%s" % layout["blocks"]
    if "unpadded_rows" in entry:
        text += " unpadded_rows=%d" % entry["unpadded_rows"]
    if "padded_dim" in entry:
        text += " padded_dim=%d" % entry["padded_dim"]
    return text


def main(path):
    with open(path) as f:
        step = json.load(f)["step"]
    head = ["step", "abi=%d" % step["abi"], "function=" + step["function"],
            "loss=%d" % step["loss"], "microbatches=%d" % step["microbatches"],
            "mesh=" + (",".join("%s=%d" % kv for kv in step["mesh"].items())
                       or "none")]
    if "rng" in step:
        head.append("rng.seed=%d rng.counter=%d" %
                    (step["rng"]["seed"], step["rng"]["counter"]))
    if "loss_scaling" in step:
        head.append("loss_scaling.growth_interval=%d" %
                    step["loss_scaling"]["growth_interval"])
    if "stage" in step:
        head.append("stage=%d" % step["stage"])
    print(" ".join(head))
    for i, arg in enumerate(step["arguments"]):
        if arg["role"] == "state":
            what = "state " + arg["kind"]
            if "parameter" in arg:
                what += " of " + arg["parameter"]
        else:
            what = "%s %s" % (arg["role"], arg["name"])
            if arg["role"] == "parameter" and not arg["trainable"]:
                what += " (frozen)"
        line = "argument %d: %s %s" % (i, what, tensor(arg))
        if "aliasing_output" in arg:
            line += " aliasing_output=%d" % arg["aliasing_output"]
        print(line)
    for i, result in enumerate(step["results"]):
        role = result["role"]
        if role == "gradient":
            what = "gradient of " + result["parameter"]
        elif role == "update":
            what = "update of argument %d" % result["updates"]
        elif role == "output":
            what = "output " + result["name"]
        else:
            what = role
        print("result %d: %s %s" % (i, what, tensor(result)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
