// dtc-remat's budget policy (--remat budget=SIZE): at budgets spread from
// the smallest activation peak any policy reaches to the peak without
// recomputation, the plan fits and recomputes no more FLOPs than the
// cheapest of full, selective and every=K that fits, strictly fewer at some
// budgets (a knapsack keeps the values that cost most to recompute per
// byte); a budget below every plan is refused, naming the smallest peak
// (Utils/check_remat_budget.py, on both four-layer models).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../Utils/check_remat_budget.py %dtc_tools_dir %S/Inputs/remat/llama4/model.onnx %t/llama --freeze '^rope_' | FileCheck %s
// RUN: %python %S/../Utils/check_remat_budget.py %dtc_tools_dir %S/Inputs/remat/gpt4/model.onnx %t/gpt --dropout | FileCheck %s
// CHECK: full: peak
// CHECK: budget={{[0-9]+}}: peak {{.*}} ok, fewer
// CHECK: refused, naming
// CHECK: 9 budgets, {{[1-9]}} with fewer FLOPs than any fixed policy that fits, 0 failed
//
// budget=auto: the memory limit less the persistent state (parameters and
// gradients 156800 B each, AdamW's state 313608 B: 627208 B).
// RUN: dtc-compile %S/Inputs/remat/llama4/model.onnx -o %t/auto --freeze '^rope_' --remat budget=auto --memory-limit 800000 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: remark: dtc-remat: budget 172792 B:
// AUTO: per rank: parameters 156800 B, gradients 156800 B, optimizer state 313608 B, activation peak
// RUN: not dtc-compile %S/Inputs/remat/llama4/model.onnx -o %t/auto --freeze '^rope_' --remat budget=auto 2>&1 | FileCheck %s --check-prefix=NOLIMIT
// NOLIMIT: error: --remat budget=auto needs --memory-limit
// RUN: not dtc-compile %S/Inputs/remat/llama4/model.onnx -o %t/auto --freeze '^rope_' --remat budget=auto --memory-limit 600000 2>&1 | FileCheck %s --check-prefix=NOROOM
// NOROOM: error: dtc-remat: the persistent state alone (627208 B) exceeds the memory limit 600000
// RUN: not dtc-compile %S/Inputs/remat/llama4/model.onnx -o %t/bad --remat sometimes 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: --remat: unknown policy 'sometimes' (none, full, every=K, selective or budget=SIZE|auto (e.g. budget=2GB))
// RUN: not dtc-compile %S/Inputs/remat/llama4/model.onnx -o %t/bad --remat every=0 2>&1 | FileCheck %s --check-prefix=EVERY
// EVERY: error: --remat: 'every=0': K must be a positive integer
// RUN: not dtc-compile %S/Inputs/remat/llama4/model.onnx -o %t/bad --remat budget=lots 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: --remat: 'budget=lots': cannot read the budget as a size
// A model without attention has nothing to recompute: a warning.
// RUN: dtc-compile %S/../Import/ONNX/Inputs/dropout_classifier.onnx -o %t/mlp --remat full 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: warning: dtc-remat: no transformer unit (a module holding an attention op) to recompute; policy 'full' changes nothing
