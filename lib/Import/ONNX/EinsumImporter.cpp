//===- EinsumImporter.cpp - ONNX Einsum as dtc ops ------------------------===//
//
// Einsum becomes the ops a person would write by hand: diagonals by masking
// and summing, labels no one else needs summed away early, then one batched
// matmul per pair of operands (operands transposed to [batch, free,
// contracted] and reshaped to rank 3), and a final sum and transpose into
// the output's order. "..." stands for broadcast dimensions, aligned from
// the right as numpy does.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "llvm/ADT/STLExtras.h"

#include <cctype>
#include <map>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A value with one label per dimension.
struct Labeled {
  Value value;
  std::string labels;
};

class EinsumLowering {
public:
  explicit EinsumLowering(NodeImporter &n) : n(n) {}

  LogicalResult run() {
    const onnx::AttributeProto *attr = n.attribute("equation");
    if (!attr) {
      n.error() << "needs an equation attribute";
      return failure();
    }
    std::string equation;
    for (char c : attr->s())
      if (c != ' ')
        equation += c;
    if (failed(parse(equation)))
      return failure();
    for (Labeled &operand : operands)
      if (failed(takeDiagonals(operand)))
        return failure();
    for (size_t i = 0; i < operands.size(); ++i)
      if (failed(sumUnneeded(operands[i], i)))
        return failure();
    Labeled acc = operands[0];
    for (size_t i = 1; i < operands.size(); ++i) {
      FailureOr<Labeled> product = contract(acc, operands[i], i);
      if (failed(product))
        return failure();
      acc = *product;
    }
    return finish(acc);
  }

private:
  /// Splits the equation into per-operand labels and the output labels,
  /// expanding "..." into digit labels.
  LogicalResult parse(const std::string &equation) {
    size_t arrow = equation.find("->");
    std::string lhs = equation.substr(0, arrow);
    SmallVector<StringRef> terms;
    StringRef(lhs).split(terms, ',');
    if (terms.size() != n.inputs.size()) {
      n.error() << "equation '" << equation << "' has " << terms.size()
                << " operands but the node has " << n.inputs.size()
                << " inputs";
      return failure();
    }
    // Subscripts are letters, with at most one "..." per term.
    auto wellFormed = [](StringRef term) {
      size_t dots = term.find("...");
      std::string rest = term.str();
      if (dots != StringRef::npos)
        rest.erase(dots, 3);
      return llvm::all_of(rest, [](char c) { return std::isalpha(c); });
    };
    StringRef given = arrow == std::string::npos
                          ? StringRef()
                          : StringRef(equation).substr(arrow + 2);
    if (!llvm::all_of(terms, wellFormed) || !wellFormed(given)) {
      n.error() << "malformed equation '" << equation << "'";
      return failure();
    }
    int64_t ellipsisRank = 0;
    for (auto [i, term] : llvm::enumerate(terms)) {
      if (!n.hasInput(i)) {
        n.error() << "input " << i << " is missing";
        return failure();
      }
      int64_t rank = n.inputType(i).getRank();
      int64_t letters = term.size() - (term.contains("...") ? 3 : 0);
      if (letters > rank) {
        n.error() << "subscripts '" << term.str() << "' do not match input "
                  << i << " of rank " << rank;
        return failure();
      }
      if (term.contains("..."))
        ellipsisRank = std::max<int64_t>(ellipsisRank, rank - letters);
    }
    auto expand = [&](StringRef term, int64_t rank) {
      size_t dots = term.find("...");
      if (dots == StringRef::npos)
        return term.str();
      int64_t count = rank - static_cast<int64_t>(term.size() - 3);
      std::string labels;
      for (int64_t j = ellipsisRank - count; j < ellipsisRank; ++j)
        labels += static_cast<char>('0' + j);
      return term.substr(0, dots).str() + labels + term.substr(dots + 3).str();
    };
    std::map<char, int> uses;
    for (auto [i, term] : llvm::enumerate(terms)) {
      int64_t rank = n.inputType(i).getRank();
      std::string labels = expand(term, rank);
      if (static_cast<int64_t>(labels.size()) != rank) {
        n.error() << "subscripts '" << term.str() << "' do not match input "
                  << i << " of rank " << rank;
        return failure();
      }
      for (char c : labels)
        ++uses[c];
      operands.push_back({n.input(i), labels});
    }
    if (arrow != std::string::npos) {
      size_t dots = given.find("...");
      if (dots != StringRef::npos) {
        std::string ellipsis;
        for (int64_t j = 0; j < ellipsisRank; ++j)
          ellipsis += static_cast<char>('0' + j);
        output = given.substr(0, dots).str() + ellipsis +
                 given.substr(dots + 3).str();
      } else {
        output = given.str();
      }
    } else {
      // Implicit output: the broadcast dimensions, then the labels used
      // once, in alphabetical order.
      for (int64_t j = 0; j < ellipsisRank; ++j)
        output += static_cast<char>('0' + j);
      for (auto [c, count] : uses)
        if (count == 1 && !std::isdigit(c))
          output += c;
    }
    for (auto [i, c] : llvm::enumerate(output))
      if (!uses.count(c) || output.find(c, i + 1) != std::string::npos) {
        n.error() << "output label '" << c
                  << "' appears in no operand, or twice in the output";
        return failure();
      }
    return success();
  }

  int64_t dimOf(const Labeled &x, char label) {
    return cast<RankedTensorType>(x.value.getType())
        .getDimSize(x.labels.find(label));
  }

  /// Replaces a label repeated within one operand by its diagonal.
  LogicalResult takeDiagonals(Labeled &x) {
    for (size_t p = 0; p < x.labels.size(); ++p) {
      size_t q = x.labels.find(x.labels[p], p + 1);
      if (q == std::string::npos)
        continue;
      auto type = cast<RankedTensorType>(x.value.getType());
      if (type.getDimSize(p) != type.getDimSize(q)) {
        n.error() << "label '" << x.labels[p] << "' has sizes "
                  << type.getDimSize(p) << " and " << type.getDimSize(q);
        return failure();
      }
      auto indexType = type.clone(n.builder.getI64Type());
      Value rows = IotaOp::create(n.builder, n.loc, indexType, p);
      Value cols = IotaOp::create(n.builder, n.loc, indexType, q);
      Value onDiagonal = CompareOp::create(n.builder, n.loc,
                                           ComparisonPredicate::EQ, rows, cols);
      Value masked = SelectOp::create(n.builder, n.loc, onDiagonal, x.value,
                                      n.scalar(0, type.getElementType()));
      x.value = ReduceSumOp::create(n.builder, n.loc, masked,
                                    ArrayRef<int64_t>{static_cast<int64_t>(q)},
                                    false);
      x.labels.erase(q, 1);
      --p; // the label may repeat a third time
    }
    return success();
  }

  /// Labels needed after operand `index` is folded in.
  std::string neededAfter(size_t index) {
    std::string needed = output;
    for (size_t i = index + 1; i < operands.size(); ++i)
      needed += operands[i].labels;
    return needed;
  }

  LogicalResult sumAway(Labeled &x, const std::string &keep) {
    SmallVector<int64_t> dims;
    std::string kept;
    for (auto [i, c] : llvm::enumerate(x.labels)) {
      if (keep.find(c) == std::string::npos)
        dims.push_back(i);
      else
        kept += c;
    }
    if (dims.empty())
      return success();
    x.value = ReduceSumOp::create(n.builder, n.loc, x.value, dims, false);
    x.labels = kept;
    return success();
  }

  /// Sums the labels of operand `index` that neither the output nor any
  /// other operand uses.
  LogicalResult sumUnneeded(Labeled &x, size_t index) {
    std::string others = output;
    for (size_t i = 0; i < operands.size(); ++i)
      if (i != index)
        others += operands[i].labels;
    return sumAway(x, others);
  }

  FailureOr<Value> permute(Value x, const std::string &from,
                           const std::string &to) {
    if (from == to)
      return x;
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(from.find(c));
    return n.create<TransposeOp>(x, perm);
  }

  /// Multiplies `a` by operand `index` and sums their shared labels that
  /// later operands and the output do not need.
  FailureOr<Labeled> contract(Labeled a, Labeled b, size_t index) {
    std::string keep = neededAfter(index);
    std::string batch, contracted, freeA, freeB;
    for (char c : a.labels) {
      if (b.labels.find(c) == std::string::npos)
        freeA += c;
      else if (keep.find(c) != std::string::npos)
        batch += c;
      else
        contracted += c;
    }
    for (char c : b.labels)
      if (a.labels.find(c) == std::string::npos)
        freeB += c;
    // Broadcast size-1 dimensions of shared labels to the other's size.
    for (char c : batch + contracted) {
      int64_t sa = dimOf(a, c), sb = dimOf(b, c);
      if (sa == sb)
        continue;
      if (sa != 1 && sb != 1) {
        n.error() << "label '" << c << "' has sizes " << sa << " and " << sb;
        return failure();
      }
      Labeled &small = sa == 1 ? a : b;
      auto type = cast<RankedTensorType>(small.value.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[small.labels.find(c)] = std::max(sa, sb);
      small.value =
          BroadcastOp::create(n.builder, n.loc, type.clone(shape), small.value);
    }
    auto product = [&](const Labeled &x, const std::string &labels) {
      int64_t size = 1;
      for (char c : labels)
        size *= dimOf(x, c);
      return size;
    };
    int64_t bt = product(a, batch), m = product(a, freeA),
            k = product(a, contracted), nn = product(b, freeB);
    SmallVector<int64_t> resultShape;
    for (char c : batch)
      resultShape.push_back(dimOf(a, c));
    for (char c : freeA)
      resultShape.push_back(dimOf(a, c));
    for (char c : freeB)
      resultShape.push_back(dimOf(b, c));
    FailureOr<Value> pa =
        permute(a.value, a.labels, batch + freeA + contracted);
    FailureOr<Value> pb =
        permute(b.value, b.labels, batch + contracted + freeB);
    if (failed(pa) || failed(pb))
      return failure();
    FailureOr<Value> mm = n.create<MatmulOp>(
        n.reshape(*pa, {bt, m, k}), n.reshape(*pb, {bt, k, nn}), false, false);
    if (failed(mm))
      return failure();
    return Labeled{n.reshape(*mm, resultShape), batch + freeA + freeB};
  }

  LogicalResult finish(Labeled x) {
    if (failed(sumAway(x, output)))
      return failure();
    FailureOr<Value> result = permute(x.value, x.labels, output);
    return n.setResult(result);
  }

  NodeImporter &n;
  SmallVector<Labeled> operands;
  std::string output;
};

} // namespace

void mlir::dtc::addEinsumImporter(OpImporterTable &table) {
  table.add("Einsum", 1,
            [](NodeImporter &n) { return EinsumLowering(n).run(); });
}
