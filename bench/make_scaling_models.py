#!/usr/bin/env python3
"""Writes Llama-shaped models of 4, 8, 16 and 32 layers whose weights are
external data that does not exist, for shape-only import.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from the
repository root:  /usr/bin/python3 bench/make_scaling_models.py
The architecture is examples/tiny_llama's (RMSNorm, RoPE, GQA, SwiGLU) with
more layers. Each model.onnx names its weights in llama_<L>.weights, which
is deleted: importing with --shapes-only must not need it. The outputs
(test/Import/ONNX/Inputs/scaling/llama_<L>.onnx) are committed.
"""
import importlib.util
import os

import onnx
import torch
from onnx import external_data_helper

OUT = "test/Import/ONNX/Inputs/scaling"
spec = importlib.util.spec_from_file_location("tiny_llama", "examples/tiny_llama/make_model.py")
tiny_llama = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tiny_llama)

os.makedirs(OUT, exist_ok=True)
for layers in (4, 8, 16, 32):
    tiny_llama.LAYERS = layers
    model = tiny_llama.build_model()
    ids = torch.zeros((tiny_llama.BATCH, tiny_llama.SEQ), dtype=torch.int64)
    path = os.path.join(OUT, f"llama_{layers}.onnx")
    torch.onnx.export(model, (ids,), path, input_names=["ids"], output_names=["logits"],
                      opset_version=17, do_constant_folding=False)
    proto = onnx.load(path)
    external_data_helper.convert_model_to_external_data(
        proto, all_tensors_to_one_file=True, location=f"llama_{layers}.weights", size_threshold=0)
    onnx.save(proto, path)
    os.remove(os.path.join(OUT, f"llama_{layers}.weights"))
