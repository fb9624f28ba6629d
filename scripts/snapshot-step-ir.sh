#!/usr/bin/env bash
# Snapshots the per-rank IR that dtc-compile writes for every configuration
# the integration tests compile, so that a refactoring can be checked to
# change nothing (or only what it means to):
#
#   scripts/snapshot-step-ir.sh before/     # on the old tree
#   scripts/snapshot-step-ir.sh after/      # on the new tree
#   diff -r before/ after/
#
# It runs the lit suite's Integration tests with dtc-compile wrapped: each
# successful compile's OUT/train_step.mlir (and report.json) is copied to
# DIR, named after the test and its output directory (the test's %t path).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: $0 SNAPSHOT_DIR" >&2; exit 2; }
mkdir -p "$1"
snapshots=$(cd "$1" && pwd)
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
for tool in build/bin/*; do ln -s "$PWD/$tool" "$tools/"; done
rm "$tools/dtc-compile"
cat > "$tools/dtc-compile" <<WRAP
#!/usr/bin/env bash
out=""; prev=""
for a in "\$@"; do [ "\$prev" = "-o" ] && out="\$a"; prev="\$a"; done
"$PWD/build/bin/dtc-compile" "\$@"
rc=\$?
if [ \$rc -eq 0 ] && [ -f "\$out/train_step.mlir" ]; then
  name=\$(echo "\$out" | sed -e 's|.*/Output/||' -e 's|/|__|g')
  cp "\$out/train_step.mlir" "$snapshots/\$name.mlir"
  [ -f "\$out/report.json" ] && cp "\$out/report.json" "$snapshots/\$name.report.json"
fi
exit \$rc
WRAP
chmod +x "$tools/dtc-compile"
/usr/lib/llvm-22/bin/lit -q --param dtc_tools_dir="$tools" build/test/Integration
echo "snapshots: $(ls "$snapshots" | wc -l) files in $snapshots"
