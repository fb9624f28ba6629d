//===- MeshSharding.cpp - the mesh and the layouts a program records ------===//
//
// The module's mesh, the #dtc.sharding records on a per-rank program's
// arguments and results (what a runner cuts and gathers by), and where a
// rank's chunk of a split dimension starts.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::dtc;

Value mlir::dtc::chunkStart(OpBuilder &b, Location loc, int64_t partSize,
                            int64_t ranks, Type type, FlatSymbolRefAttr mesh,
                            ArrayAttr axes) {
  Value indices = IotaOp::create(
      b, loc, RankedTensorType::get({partSize * ranks}, type), 0);
  // (With a reason: a later partition of the same axis, ZeRO's, takes it
  // as this rank's value already, not as a part to place.)
  Value mine = ShardOp::create(
      b, loc, RankedTensorType::get({partSize}, type), indices, mesh, axes,
      b.getI64IntegerAttr(0), b.getI64IntegerAttr(1),
      b.getStringAttr("where this rank's chunk starts"));
  return ReshapeOp::create(b, loc, RankedTensorType::get({}, type),
                           SliceOp::create(b, loc, mine, {0}, {1}, {1}));
}

FlatSymbolRefAttr mlir::dtc::meshWithAxis(ModuleOp module, StringRef axis,
                                          int64_t size) {
  // The mesh the module's steps run on: the one they record, else the
  // module's only mesh (dtc-compile makes it, in the user's axis order),
  // else a new one.
  MeshOp mesh;
  for (auto func : module.getOps<func::FuncOp>()) {
    MeshOp recorded = getStepMesh(func);
    if (mesh && recorded && recorded != mesh) {
      module.emitError("the module's steps run on different meshes, @")
          << mesh.getSymName() << " and @" << recorded.getSymName();
      return {};
    }
    if (recorded)
      mesh = recorded;
  }
  if (!mesh) {
    SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
    if (meshes.size() > 1) {
      module.emitError("the module has several dtc.mesh ops and no step's "
                       "dtc.step names one");
      return {};
    }
    if (!meshes.empty())
      mesh = meshes.front();
  }
  OpBuilder b(module.getBodyRegion());
  if (!mesh) {
    mesh = MeshOp::create(b, module.getLoc(), "mesh", b.getStrArrayAttr({axis}),
                          b.getDenseI64ArrayAttr({size}));
  } else if (int64_t existing = mesh.axisSize(axis); existing < 0) {
    SmallVector<Attribute> axes(mesh.getAxes().begin(), mesh.getAxes().end());
    SmallVector<int64_t> sizes(mesh.getSizes());
    axes.push_back(b.getStringAttr(axis));
    sizes.push_back(size);
    mesh.setAxesAttr(b.getArrayAttr(axes));
    mesh.setSizes(sizes);
  } else if (existing != size) {
    module.emitError("mesh axis '")
        << axis << "' has size " << existing << ", not " << size;
    return {};
  }
  return FlatSymbolRefAttr::get(mesh);
}

/// `old` (or nothing) with dimension `dim` of a rank-`rank` tensor also
/// split over `axis` in `blocks` blocks.
static ShardingAttr withSplit(MLIRContext *context, ShardingAttr old,
                              int64_t rank, FlatSymbolRefAttr mesh, int64_t dim,
                              StringRef axis, int64_t blocks) {
  Builder b(context);
  SmallVector<Attribute> dims(rank, b.getArrayAttr({}));
  SmallVector<int64_t> allBlocks(rank, 1);
  if (old) {
    dims.assign(old.getDims().begin(), old.getDims().end());
    for (int64_t d = 0; d < rank; ++d)
      allBlocks[d] = old.blocksOf(d);
  }
  SmallVector<Attribute> axes(cast<ArrayAttr>(dims[dim]).begin(),
                              cast<ArrayAttr>(dims[dim]).end());
  axes.push_back(b.getStringAttr(axis));
  dims[dim] = b.getArrayAttr(axes);
  allBlocks[dim] *= blocks;
  bool anyBlocks = llvm::any_of(allBlocks, [](int64_t n) { return n != 1; });
  return ShardingAttr::get(context, mesh, b.getArrayAttr(dims),
                           anyBlocks ? ArrayRef<int64_t>(allBlocks)
                                     : ArrayRef<int64_t>(),
                           ArrayAttr());
}

void mlir::dtc::recordSharding(SignatureEditor &signature, unsigned index,
                               FlatSymbolRefAttr mesh, int64_t dim,
                               StringRef axis, int64_t blocks) {
  func::FuncOp func = signature.getFunction();
  int64_t rank =
      cast<RankedTensorType>(func.getArgument(index).getType()).getRank();
  signature.setArgAttr(
      index, kShardingAttrName,
      withSplit(func.getContext(),
                signature.getArgAttrOfType<ShardingAttr>(index,
                                                         kShardingAttrName),
                rank, mesh, dim, axis, blocks));
}

void mlir::dtc::recordResultSharding(SignatureEditor &signature,
                                     unsigned index,
                                     std::optional<unsigned> param,
                                     FlatSymbolRefAttr mesh, int64_t dim,
                                     StringRef axis) {
  func::FuncOp func = signature.getFunction();
  // Next to the result's own splits where it has some (ZeRO over ep after
  // dp), else its parameter's.
  ShardingAttr base =
      signature.getResultAttrOfType<ShardingAttr>(index, kShardingAttrName);
  if (!base && param)
    base = signature.getArgAttrOfType<ShardingAttr>(*param, kShardingAttrName);
  auto ret = func.getBody().front().getTerminator();
  int64_t rank =
      cast<RankedTensorType>(ret->getOperand(index).getType()).getRank();
  signature.setResultAttr(
      index, kShardingAttrName,
      withSplit(func.getContext(), base, rank, mesh, dim, axis, 1));
}
