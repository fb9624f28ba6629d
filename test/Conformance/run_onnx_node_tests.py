#!/usr/bin/env python3
"""Runs ONNX's conformance tests (node tests, and the model tests of
`pytorch-converted`, `pytorch-operator` and `simple`) through dtc.

For every test directory (model.onnx + test_data_set_*/), imports the model
with `dtc-translate --import-onnx --bind-inputs <data set>`, runs it with
`dtc-run`, and compares each output with the expected one (rtol 1e-3,
atol 1e-7, as ONNX's backend tests do; integer and bool outputs exactly).
As ONNX's backend runner does, an unnamed input_N.pb binds the N-th graph
input and an unnamed output_N.pb is the N-th graph output.

A test whose import ends in a clean "unsupported" diagnostic (an op, element
type or feature dtc does not handle) is skipped and counted by reason. Any
other failure -- a wrong value, a crash, an unclean error -- fails. So does a
skip of a test that uses only ops listed in the covered-ops file: those must
pass. Prints 'N passed, N failed, N skipped' and exits non-zero on failures.

Needs numpy and onnx (Debian: python3-numpy python3-onnx).
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tarfile
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

UNSUPPORTED = [
    re.compile(r"unsupported ONNX op '(\w+)'"),
    re.compile(r"op domain '([\w.]+)' is not supported"),
    re.compile(r"(unsupported (?:target )?element type \w+)"),
    re.compile(r"is not a tensor; dtc supports tensors only"),
    re.compile(r"(sparse and string constants are not supported)"),
    re.compile(r"(unsupported \w+ reduction '\w+')"),
    re.compile(r"(unsupported \w+ (?:input|output|attribute) \w+)"),
]


TYPE_SKIP = re.compile(r"element type|sequence or optional")


def classify_skip(stderr):
    for pattern in UNSUPPORTED:
        match = pattern.search(stderr)
        if match:
            return match.group(1) if pattern.groups else match.group(0)
    return None


def load_pb(path, declared_types, positional=()):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    array = numpy_helper.to_array(tensor)
    bf16 = onnx.TensorProto.BFLOAT16 in (tensor.data_type, declared_types.get(tensor.name))
    if bf16 and array.dtype.kind in "iu":
        # numpy has no bfloat16: onnx 1.12 returns the bit patterns of
        # int32_data (raw_data it converts to float32 itself).
        array = (array.astype(np.uint32) << 16).view(np.float32)
    if not tensor.name and positional:
        # Unnamed: the graph value at the file's position (output_N.pb).
        return positional[int(re.search(r"_(\d+)\.pb$", path).group(1))], array
    return tensor.name, array


def compare(expected, actual, bf16=False):
    if expected.shape != actual.shape:
        return f"shape {actual.shape} != expected {expected.shape}"
    if expected.dtype.kind in "biu":
        if not np.array_equal(expected.astype(np.int64), actual.astype(np.int64)):
            return "integer values differ"
        return None
    exp = expected.astype(np.float64)
    act = actual.astype(np.float64)
    # bf16 results: within one bf16 ulp (2^-7 relative), as two correct
    # implementations that round at different points can differ.
    rtol = 2.0 ** -7 if bf16 else 1e-3
    if np.array_equal(np.isnan(exp), np.isnan(act)) and np.allclose(
        act[~np.isnan(act)], exp[~np.isnan(exp)], rtol=rtol, atol=1e-7
    ):
        return None
    with np.errstate(invalid="ignore"):
        err = np.nanmax(np.abs(act - exp))
    return f"values differ (max abs error {err:.3g})"


def run_test(tools, test_dir, workdir):
    """Returns ('pass'|'fail'|'skip', detail)."""
    model = os.path.join(test_dir, "model.onnx")
    graph = onnx.load(model).graph
    # Sequence/optional data sets are not TensorProto files, so --bind-inputs
    # could not read them; the importer rejects such graphs anyway.
    if any(not v.type.HasField("tensor_type") for v in list(graph.input) + list(graph.output)):
        return "skip", "sequence or optional graph values"
    declared = {v.name: v.type.tensor_type.elem_type for v in graph.output}
    sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
    if not sets:
        return "skip", "no data set"
    for data_set in sets:
        data_dir = os.path.join(test_dir, data_set)
        mlir = os.path.join(workdir, "model.mlir")
        out_dir = os.path.join(workdir, "out_" + data_set)
        imp = subprocess.run(
            [tools["dtc-translate"], "--import-onnx", model, "--bind-inputs",
             data_dir, "-o", mlir], capture_output=True, text=True, timeout=120)
        if imp.returncode != 0:
            reason = classify_skip(imp.stderr)
            if imp.returncode > 0 and reason and "error:" in imp.stderr:
                return "skip", reason
            return "fail", "import: " + (imp.stderr.strip() or f"exit {imp.returncode}")[-400:]
        run = subprocess.run(
            [tools["dtc-run"], mlir, "--inputs", data_dir, "--outputs", out_dir],
            capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            return "fail", "run: " + (run.stderr.strip() or f"exit {run.returncode}")[-400:]
        outputs = sorted(f for f in os.listdir(data_dir) if f.startswith("output_"))
        for output in outputs:
            name, expected = load_pb(os.path.join(data_dir, output), declared,
                                     [v.name for v in graph.output])
            ours = os.path.join(out_dir, name + ".npy")
            if not os.path.exists(ours):
                return "fail", f"no output '{name}'"
            problem = compare(expected, np.load(ours),
                              bf16=declared.get(name) == onnx.TensorProto.BFLOAT16)
            if problem:
                return "fail", f"{data_set}/{name}: {problem}"
    return "pass", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", required=True, help="directory holding dtc-translate and dtc-run")
    parser.add_argument("--node-dir", nargs="+", default=["/usr/share/libonnx-testdata/data/node"],
                        help="directories of tests (several: each test is named DIR/TEST)")
    parser.add_argument("--node-archive",
                        help="a .tar.xz of node tests (make_onnx_node_tests.py writes one), "
                             "run instead of --node-dir")
    parser.add_argument("--covered-ops", help="file listing the ONNX ops whose tests must pass")
    parser.add_argument("--known-deviations",
                        help="file of 'test reason' lines: tests whose expected data dtc "
                             "deliberately disagrees with (reported, not passed)")
    parser.add_argument("--filter", default="", help="only tests whose name contains this")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()

    tools = {t: os.path.join(args.tools, t) for t in ("dtc-translate", "dtc-run")}
    covered = set()
    if args.covered_ops:
        with open(args.covered_ops) as f:
            covered = {line.split("#")[0].strip() for line in f} - {""}
    deviations = {}
    if args.known_deviations:
        with open(args.known_deviations) as f:
            for line in f:
                line = line.split("#")[0].strip()
                if line:
                    test, _, reason = line.partition(" ")
                    deviations[test] = reason.strip()
    if args.node_archive:
        extracted = tempfile.TemporaryDirectory()
        with tarfile.open(args.node_archive) as archive:
            archive.extractall(extracted.name)
        args.node_dir = [os.path.join(extracted.name, "node")]
    prefix = len(args.node_dir) > 1
    tests = {}
    for root in args.node_dir:
        for d in sorted(os.listdir(root)):
            name = os.path.join(os.path.basename(root.rstrip("/")), d) if prefix else d
            if args.filter in name:
                tests[name] = os.path.join(root, d)
    if not tests:
        print(f"no tests found in {' '.join(args.node_dir)}", file=sys.stderr)
        return 1

    def job(test):
        test_dir = tests[test]
        ops = {node.op_type for node in onnx.load(os.path.join(test_dir, "model.onnx")).graph.node}
        with tempfile.TemporaryDirectory() as workdir:
            try:
                status, detail = run_test(tools, test_dir, workdir)
            except subprocess.TimeoutExpired:
                status, detail = "fail", "timed out"
        # Element types and value kinds outside dtc's set (strings, unsigned
        # ints wider than 8 bits, sequences) are outside any op's coverage.
        if status == "skip" and ops and ops <= covered and not TYPE_SKIP.search(detail):
            status, detail = "fail", f"skipped although all its ops are covered ({detail})"
        if test in deviations:
            if status == "fail":
                status, detail = "xfail", deviations[test]
            elif status == "pass":
                status, detail = "fail", "listed as a known deviation but passes"
        return test, status, detail

    counts = collections.Counter()
    skips = collections.Counter()
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for test, status, detail in pool.map(job, tests):
            counts[status] += 1
            if status == "skip":
                skips[detail] += 1
            elif status == "fail":
                failures.append((test, detail))
            if args.verbose:
                print(f"{status.upper():4} {test} {detail}")

    if skips:
        print("Skipped as unsupported, by reason:")
        for reason, n in sorted(skips.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:4}  {reason}")
    for test, detail in failures:
        print(f"FAIL {test}: {detail}")
    for test, reason in sorted(deviations.items()):
        print(f"known deviation (not counted as passed): {test}: {reason}")
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
