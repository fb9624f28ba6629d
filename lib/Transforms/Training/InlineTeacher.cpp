//===- InlineTeacher.cpp - a frozen teacher inside the student's step -----===//

#include "Signature.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_INLINETEACHER
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct InlineTeacherPass
    : public dtc::impl::InlineTeacherBase<InlineTeacherPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto teacher = module.lookupSymbol<func::FuncOp>("teacher");
    func::FuncOp student;
    for (auto func : module.getOps<func::FuncOp>())
      if (func != teacher && !func.isExternal())
        student = func;
    if (!teacher || !student) {
      module.emitError("dtc-inline-teacher needs a @teacher function and a "
                       "student function");
      return signalPassFailure();
    }

    OpBuilder b(&getContext());
    Block &body = student.getBody().front();
    b.setInsertionPointToStart(&body);
    IRMapping mapping;
    for (BlockArgument arg : teacher.getArguments()) {
      unsigned i = arg.getArgNumber();
      if (auto param =
              teacher.getArgAttrOfType<StringAttr>(i, kParamAttrName)) {
        SmallVector<NamedAttribute> attrs = {
            b.getNamedAttr(kParamAttrName,
                           b.getStringAttr("teacher/" + param.str())),
            b.getNamedAttr(kTrainableAttrName, b.getBoolAttr(false))};
        if (Attribute value = teacher.getArgAttr(i, kValueAttrName))
          attrs.push_back(b.getNamedAttr(kValueAttrName, value));
        mapping.map(arg, appendArgument(student, arg.getType(), attrs));
        continue;
      }
      std::string name = dtc::getArgumentName(teacher, i);
      Value match;
      for (BlockArgument candidate : student.getArguments())
        if (dtc::getArgumentName(student, candidate.getArgNumber()) == name)
          match = candidate;
      if (!match || match.getType() != arg.getType()) {
        teacher.emitError("the teacher's input '")
            << name << "' of type " << arg.getType()
            << " is not an input of the student";
        return signalPassFailure();
      }
      mapping.map(arg, match);
    }
    Block &teacherBody = teacher.getBody().front();
    for (Operation &op : teacherBody.without_terminator())
      b.clone(op, mapping);
    auto teacherReturn = cast<func::ReturnOp>(teacherBody.getTerminator());
    for (auto [i, value] : llvm::enumerate(teacherReturn.getOperands()))
      appendResult(
          student, mapping.lookup(value),
          {b.getNamedAttr(
              kOutputAttrName,
              b.getStringAttr("teacher/" + dtc::getResultName(teacher, i)))});
    teacher.erase();
  }
};

} // namespace
