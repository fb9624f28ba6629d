//===- DefineMesh.cpp - the device mesh, in the user's axis order ---------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Runtime/Communicator.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_DEFINEMESH
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

constexpr llvm::StringLiteral kMeshSymbol = "mesh";

struct DefineMeshPass : public dtc::impl::DefineMeshBase<DefineMeshPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshShape mesh;
    if (std::string error = MeshShape::parse(shape, mesh); !error.empty()) {
      module.emitError("dtc-define-mesh: ") << error;
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    ArrayAttr axes = b.getStrArrayAttr(
        SmallVector<StringRef>(mesh.axes.begin(), mesh.axes.end()));
    auto existing = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
        module, b.getStringAttr(kMeshSymbol));
    for (MeshOp other : module.getOps<MeshOp>())
      if (other != existing) {
        other.emitError("dtc-define-mesh: the module has a mesh already (@")
            << other.getSymName() << "); a step runs on one mesh";
        return signalPassFailure();
      }
    if (existing) {
      if (existing.getAxes() == axes &&
          existing.getSizes() == ArrayRef(mesh.sizes))
        return;
      existing.emitError("dtc-define-mesh: the module's mesh differs from "
                         "the one asked for (")
          << shape << ")";
      return signalPassFailure();
    }
    MeshOp::create(b, module.getLoc(), kMeshSymbol, axes,
                   b.getDenseI64ArrayAttr(mesh.sizes));
  }
};

} // namespace
