//===- PipelineStages.h - which rank runs an op of a pipelined step -*- C++
//-*-===//
//
// A pipelined step (dtc-pipeline-parallel) is one program for every rank:
// each op of the pipelined part carries the global stage it belongs to,
// and the step says which pp coordinate holds each stage. A parameter is
// held by the ranks whose stages read it, with its optimizer state. A rank
// runs the ops of its stages and the ops that carry no stage whose
// operands it holds (what reads parameters alone, the optimizer of its
// parameters); values cross stages by collective broadcasts over pp,
// placed in the order of the schedule.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_PIPELINESTAGES_H
#define DTC_DIALECT_DTC_IR_PIPELINESTAGES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::dtc {

/// On an op: its global stage (i64).
inline constexpr llvm::StringLiteral kStageAttrName = "dtc.stage";
/// On an op of a pipelined step: the microbatch it computes (i64).
inline constexpr llvm::StringLiteral kMicrobatchAttrName = "dtc.microbatch";
/// On an op of a pipelined step's fragment: which of the microbatch's
/// fragments on its stage it belongs to ("forward", "backward",
/// "backward-input" or "backward-weight"), for measuring them at run time.
inline constexpr llvm::StringLiteral kFragmentAttrName = "dtc.fragment";
/// On a pp broadcast of a pipelined step: the pp coordinates that read its
/// value, when not every other one does; only the root and they take part
/// (the root sends to each, point to point).
inline constexpr llvm::StringLiteral kReceiversAttrName = "dtc.receivers";
/// On a parameter argument of a pipelined step: the coordinates along the
/// pp axis whose ranks hold it (i64 array), those whose stages read it,
/// when not every one. Its optimizer state, gradient and update are held
/// by the same ranks, and nowhere else.
inline constexpr llvm::StringLiteral kPipelineRanksAttrName = "dtc.pp_ranks";
/// On the step function: a dictionary with `axis` (the mesh axis of the
/// stages), `stage_ranks` (per global stage, the coordinate along `axis`
/// that runs it), `schedule`, `microbatches`, `virtual_stages`, and per
/// stage what one microbatch's fragments take on the default device
/// (`forward_seconds`, `backward_input_seconds`, `backward_weight_seconds`;
/// an unsplit backward's all in the input's), the activation bytes its
/// forward keeps for its backward (`activation_bytes`) and the bytes it
/// broadcasts to other ranks (`sent_bytes`), and its transformer layers
/// (`layers`: attention ops).
inline constexpr llvm::StringLiteral kPipelineAttrName = "dtc.pipeline";

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_PIPELINESTAGES_H
