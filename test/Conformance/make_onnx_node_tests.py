#!/usr/bin/env python3
"""Writes ONNX's node conformance tests, as the installed onnx release
defines them, in the layout of ONNX's test data (one directory per test:
model.onnx, test_data_set_N/input_K.pb and output_K.pb).

usage: make_onnx_node_tests.py OUT.tar.xz
Run with a pinned onnx (the committed archive: onnx 1.23.2, from a venv
outside the repository: pip install onnx==1.23.2 numpy) from the repository
root:
  VENV/bin/python test/Conformance/make_onnx_node_tests.py \\
      test/Conformance/Inputs/onnx-1.23.2-node.tar.xz
The cases come from onnx.backend.test.case.node.collect_testcases, the
definitions ONNX generates its own test data from; values whose declared
type is a sequence or an optional are written as SequenceProto and
OptionalProto, as ONNX writes them. The archive is committed, so CI needs
no onnx release but Debian's.
"""
import io
import os
import sys
import tarfile
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
import onnx.backend.test.case.node as node_cases


def serialize(value, value_info):
    """The proto bytes of one input or output, by its declared type."""
    kind = value_info.type.WhichOneof("value") if value_info is not None else "tensor_type"
    name = value_info.name if value_info is not None else ""
    if isinstance(value, onnx.TensorProto):  # types numpy lacks (int4, float4)
        value = onnx.TensorProto.FromString(value.SerializeToString())
        value.name = name
        return value.SerializeToString()
    if kind == "sequence_type":
        return numpy_helper.from_list(value, name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, name).SerializeToString()
    return numpy_helper.from_array(np.asarray(value), name).SerializeToString()


def main():
    out = sys.argv[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    with tarfile.open(out, "w:xz") as archive:
        def add(path, data):
            info = tarfile.TarInfo(path)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            archive.addfile(info, io.BytesIO(data))

        for case in sorted(cases, key=lambda c: c.name):
            graph = case.model.graph
            add(f"node/{case.name}/model.onnx", case.model.SerializeToString())
            for i, (inputs, outputs) in enumerate(case.data_sets):
                for kind, values, infos in (("input", inputs, graph.input),
                                            ("output", outputs, graph.output)):
                    for k, value in enumerate(values):
                        info = infos[k] if k < len(infos) else None
                        add(f"node/{case.name}/test_data_set_{i}/{kind}_{k}.pb",
                            serialize(value, info))
    print(f"{len(cases)} node tests of onnx {onnx.__version__} in {out}")


if __name__ == "__main__":
    main()
