"""Runs a committed fixture generator at other sizes, for the benches."""
import importlib.util
import os


def run_generator(path, directory, run=lambda module: module.main(), **sizes):
    """Loads the generator script at PATH, sets its module-level sizes
    (VOCAB=..., DIM=..., read when its models are built) and runs it (its
    main(), or RUN(module)) in DIRECTORY, where it writes its files."""
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in sizes.items():
        setattr(module, name, value)
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        run(module)
    finally:
        os.chdir(cwd)
