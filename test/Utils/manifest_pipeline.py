"""Prints the pipeline a dtc-compile output directory records in its
manifest, as a dtc-opt --pass-pipeline: `builtin.module(dtc-training{...})`."""
import json
import sys

with open(sys.argv[1] + "/manifest.json") as f:
    print("builtin.module(%s)" % json.load(f)["pipeline"])
