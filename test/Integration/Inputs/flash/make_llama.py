"""The tiny Llama of examples/tiny_llama with attention the fused CUDA
kernels take (dtc-fuse-attention: head dimension 128, their largest tile;
two query heads on one key/value head) and 72 tokens, so that a sequence
spans a whole and a partial 64-key tile: llama/model.onnx, llama/task/ (a
training batch) and llama/initial/ (the initializers as <name>.npy, the
parameters before training). Run with Debian's python3 (torch 1.13).
"""
import os
import shutil
import sys

here = os.path.dirname(os.path.abspath(__file__))
examples = os.path.join(here, "..", "..", "..", "..", "examples")
out = os.path.join(here, "llama")
sys.path.insert(0, os.path.join(examples, "tiny_llama"))
sys.path.insert(0, examples)
import make_model as llama  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from export_example import export  # noqa: E402

llama.VOCAB, llama.DIM, llama.HEADS, llama.KV_HEADS = 64, 256, 2, 1
llama.HEAD_DIM, llama.HIDDEN, llama.LAYERS = 128, 128, 1
llama.SEQ, llama.BATCH = 72, 2
os.makedirs(out, exist_ok=True)
os.chdir(out)
export(llama.build_model(), llama.VOCAB, llama.SEQ, llama.BATCH)
shutil.rmtree("data")  # (the example's inference check: not needed)
os.makedirs("initial", exist_ok=True)
for tensor in onnx.load("model.onnx").graph.initializer:
    np.save(f"initial/{tensor.name}.npy", numpy_helper.to_array(tensor))
