# -*- Python -*-
# lit configuration for dtc's IR, import and executor tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DTC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "Utils", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Conformance"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dtc_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
# Multi-rank tests run real mpirun, as root in CI, more ranks than cores.
config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
config.environment["OMP_NUM_THREADS"] = "1"
llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%onnx_node_dir", "/usr/share/libonnx-testdata/data/node"))
config.substitutions.append(("%dtc_tools_dir", config.dtc_tools_dir))
# A private session directory per run: see Utils/mpirun.sh.
config.substitutions.append(
    ("%mpirun", os.path.join(config.test_source_root, "Utils", "mpirun.sh")))

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# scripts/snapshot-step-ir.sh runs the suite with wrapped tools.
config.dtc_tools_dir = lit_config.params.get("dtc_tools_dir", config.dtc_tools_dir)
# Every dtc-compile of a test says its --target: the main run's is
# `reference` (dtc-compile's default, cpu, would add seconds of code
# generation to each of hundreds of compiles); with --param dtc_target=cpu
# every dtc-compile also compiles the step for CPU ranks, so that dtc-run
# trains it compiled (ctest's lit-target-cpu runs the training tests so). A
# test's own later --target wins. A test whose step the CPU
# backend cannot compile yet says `XFAIL: dtc-target-cpu`: it counts as a
# failure there, expected, until the backend can (then it must go).
dtc_target = lit_config.params.get("dtc_target", "reference")
if dtc_target == "cpu":
    config.available_features.add("dtc-target-cpu")
    # Outputs of its own: ctest runs it beside the main run.
    config.test_exec_root = os.path.join(config.dtc_obj_root, "test", "target-cpu")
tools = [
    ToolSubst("dtc-opt", unresolved="fatal"),
    ToolSubst("dtc-run", unresolved="fatal"),
    ToolSubst("dtc-launch", unresolved="fatal"),
    ToolSubst("dtc-translate", unresolved="fatal"),
    ToolSubst("dtc-plan", unresolved="fatal"),
    ToolSubst("dtc-compile", unresolved="fatal",
              extra_args=["--target", dtc_target]),
]
llvm_config.add_tool_substitutions(tools, [config.dtc_tools_dir, config.llvm_tools_dir])
