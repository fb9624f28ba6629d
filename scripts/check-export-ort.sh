#!/usr/bin/env bash
# Checks dtc-run --export-onnx end to end outside dtc: trains the example
# model for 50 steps, exports it (--export-onnx) and its parameters
# (--export-checkpoint), then runs the exported ONNX model in onnxruntime
# and the example's PyTorch module loaded with the exported parameters on
# the same batch, and compares the logits (1e-5). onnxruntime comes from
# the Python package index into a venv of its own ($DTC_ORT_VENV, by
# default ~/.cache/dtc/venv-ort); PyTorch is Debian's python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  apt-get install -y -q python3-torch >/dev/null
fi
venv=${DTC_ORT_VENV:-$HOME/.cache/dtc/venv-ort}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import onnxruntime" 2>/dev/null; then
  apt-get install -y -q python3-venv >/dev/null
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q onnxruntime==1.20.1 numpy==2.1.3
fi
scripts/build.sh dtc-compile dtc-run dtc-launch

example=examples/tiny_transformer
out=build/export-check
rm -rf "$out" && mkdir -p "$out"
build/bin/dtc-compile "$example/model.onnx" -o "$out/step" --lr 3e-3 2>/dev/null
build/bin/dtc-run "$out/step" --batch "$example/task" --steps 50 --log-every 50 \
  --export-onnx "$out/trained.onnx" --export-checkpoint "$out/params"

# PyTorch: the example's module with the exported parameters.
/usr/bin/python3 - "$example" "$out" <<'PY'
import os, sys
import numpy as np
import torch
example, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, example)
from make_model import build_model
model = build_model()
state = {name: torch.from_numpy(np.load(f"{out}/params/{name}.npy"))
         for name in model.state_dict()}
model.load_state_dict(state)
ids = torch.from_numpy(np.load(f"{example}/data/ids.npy"))
with torch.no_grad():
    np.save(f"{out}/torch_logits.npy", model(ids).numpy())
print(f"PyTorch {torch.__version__}: logits of the trained parameters "
      f"({len(state)} tensors from --export-checkpoint)")
PY

# onnxruntime: the exported model.
"$venv/bin/python" - "$example" "$out" <<'PY'
import sys
import numpy as np
import onnxruntime as ort
example, out = sys.argv[1], sys.argv[2]
ids = np.load(f"{example}/data/ids.npy")
session = ort.InferenceSession(f"{out}/trained.onnx", providers=["CPUExecutionProvider"])
logits = session.run(None, {session.get_inputs()[0].name: ids})[0]
untrained = ort.InferenceSession(f"{example}/model.onnx", providers=["CPUExecutionProvider"])
before = untrained.run(None, {untrained.get_inputs()[0].name: ids})[0]
expected = np.load(f"{out}/torch_logits.npy")
diff = np.abs(logits - expected).max()
scale = np.abs(expected).max()
print(f"onnxruntime {ort.__version__} on trained.onnx vs PyTorch: max |diff| "
      f"{diff:.3g} (logits up to {scale:.3g}); the untrained model's logits "
      f"differ by up to {np.abs(before - expected).max():.3g}")
ok = np.allclose(logits, expected, rtol=1e-5, atol=1e-5)
print("export matches PyTorch to 1e-5" if ok else "EXPORT DIFFERS")
sys.exit(0 if ok else 1)
PY
