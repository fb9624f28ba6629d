//===- CapacityFactor.h - a mixture's baked capacity, rewritten -*- C++ -*-===//
//
// GShard/Switch exports bake each expert's capacity (its buffer's rows per
// routing group) into constants; --capacity-factor rewrites them before the
// graph is imported.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_IMPORT_ONNX_CAPACITYFACTOR_H
#define DTC_LIB_IMPORT_ONNX_CAPACITYFACTOR_H

#include "dtc/Import/ONNX/ONNXImporter.h"

#include <map>
#include <string>

namespace onnx {
class GraphProto;
} // namespace onnx

namespace mlir::dtc {

/// Rewrites the capacity of the mixtures of `graph` to ceil(factor * k *
/// tokens / experts), where `shapes` gives the static shape of a node's
/// first output by its name (from an import of the graph as it is).
/// Returns an error naming the node where the capacity cannot be found or
/// rewritten; fills `done`.
std::string rewriteCapacity(onnx::GraphProto &graph, double factor,
                            const std::map<std::string, Shape> &shapes,
                            CapacityRewrite &done);

} // namespace mlir::dtc

#endif // DTC_LIB_IMPORT_ONNX_CAPACITYFACTOR_H
