#!/usr/bin/env python3
"""check_onnx_export.py ORIGINAL EXPORTED PARAMS

Checks dtc-run --export-onnx's output against the model it started from:
the same graph (nodes, inputs, outputs, opsets, metadata) but for the
initializers; each initializer named after a file PARAMS/<name>.npy (dtc's
--dump param/ directory) holds that array byte for byte, in the original's
data type and shape; the others are unchanged. Prints what it compared.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    original, exported = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
    params = sys.argv[3]
    problems = []
    a, b = onnx.ModelProto(), onnx.ModelProto()
    a.CopyFrom(original)
    b.CopyFrom(exported)
    del a.graph.initializer[:]
    del b.graph.initializer[:]
    if a.SerializeToString() != b.SerializeToString():
        problems.append("the models differ beyond their initializers")
    before = {t.name: t for t in original.graph.initializer}
    after = {t.name: t for t in exported.graph.initializer}
    if list(before) != list(after):
        problems.append(f"initializers {list(after)}, expected {list(before)}")
    trained = 0
    for name, tensor in after.items():
        value = numpy_helper.to_array(tensor)
        old = numpy_helper.to_array(before[name])
        if value.dtype != old.dtype or value.shape != old.shape:
            problems.append(f"{name}: {value.dtype}{value.shape}, "
                            f"expected {old.dtype}{old.shape}")
            continue
        path = os.path.join(params, name + ".npy")
        if os.path.exists(path):
            trained += 1
            expected = np.load(path)
            if value.tobytes() != expected.astype(old.dtype).tobytes():
                problems.append(f"{name}: not the dumped parameter")
            if value.tobytes() == old.tobytes():
                problems.append(f"{name}: still the original value")
        elif value.tobytes() != old.tobytes():
            problems.append(f"{name}: changed but not a trained parameter")
    for problem in problems:
        print("check_onnx_export.py:", problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"export ok: {trained} trained initializers replaced, "
          f"{len(after) - trained} kept, the graph unchanged")


if __name__ == "__main__":
    main()
