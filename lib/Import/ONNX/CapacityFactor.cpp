//===- CapacityFactor.cpp - a mixture's baked capacity, rewritten ---------===//
//
// A GShard/Switch mixture as exporters write it: a OneHot of each token's
// chosen expert, a CumSum of it along the routing group (each token's place
// in its expert's buffer), a comparison of the place with the capacity C
// (tokens past it are dropped), a OneHot of the place with depth C (the
// token's slot) and the dispatch and combine tensors [..., experts, C]
// built from it, sometimes from zeros of that shape. C is a number in
// constants, not a parameter of the graph. This rewrite finds the capacity
// where it is read -- the slot OneHots' depth, the comparisons of the
// places, and zero tensors with a dimension of C added to what the slot
// OneHots make -- and writes the new one there (in new Constant nodes: the
// old constants may be shared). Any other constant of the dispatch that
// holds C (a Reshape's shape, say) is an error naming its node: dtc would
// not know what it means.
//
//===----------------------------------------------------------------------===//

#include "CapacityFactor.h"

#include "dtc/Runtime/ONNX/TensorProto.h"
#include "onnx/onnx_pb.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <deque>
#include <set>

using namespace mlir::dtc;

namespace {

class CapacityRewriter {
public:
  CapacityRewriter(onnx::GraphProto &graph,
                   const std::map<std::string, Shape> &shapes)
      : graph(graph), shapes(shapes) {
    for (const onnx::NodeProto &node : graph.node()) {
      for (const std::string &output : node.output())
        producer[output] = &node;
      for (const std::string &input : node.input())
        consumers[input].push_back(&node);
    }
    for (const onnx::TensorProto &init : graph.initializer())
      initializers[init.name()] = &init;
  }

  std::string run(double factor, CapacityRewrite &done) {
    // The places: CumSums of OneHots of the chosen experts.
    std::vector<const onnx::NodeProto *> places;
    for (const onnx::NodeProto &node : graph.node()) {
      const onnx::NodeProto *onehot =
          node.op_type() == "CumSum" ? producer.lookup(node.input(0)) : nullptr;
      if (onehot && onehot->op_type() == "OneHot")
        places.push_back(&node);
    }
    if (places.empty())
      return "--capacity-factor: the model has no expert capacity to "
             "rewrite (no CumSum of a OneHot: GShard's or Switch's capacity "
             "form); a mixture in the loop form is dropless (see "
             "--expert-bound)";
    int64_t experts = 0, k = 0, tokens = 0;
    std::set<std::string> placeValues;
    for (const onnx::NodeProto *place : places) {
      const onnx::NodeProto *onehot = producer.lookup(place->input(0));
      std::optional<int64_t> depth = scalar(onehot->input(1));
      std::optional<int64_t> chosen = topK(onehot->input(0));
      auto shape = shapes.find(place->output(0));
      std::optional<int64_t> axis = scalar(place->input(1));
      if (!depth || !chosen || shape == shapes.end() || !axis)
        return "--capacity-factor: cannot tell the experts, k or the routing "
               "group's tokens of the mixture at node '" +
               place->name() + "' (CumSum)";
      int64_t rank = shape->second.size();
      int64_t group = shape->second[(*axis % rank + rank) % rank];
      if ((experts && *depth != experts) || (k && *chosen != k) ||
          (tokens && group != tokens))
        return "--capacity-factor: the mixtures at node '" + place->name() +
               "' and before it route differently (experts, k or routing "
               "group); one factor cannot rewrite both";
      experts = *depth, k = *chosen, tokens = group;
      forwardSlice(place->output(0), placeValues);
    }
    // The slots: OneHots of a place, whose depth is the capacity.
    std::vector<const onnx::NodeProto *> slots;
    int64_t capacity = 0;
    for (const onnx::NodeProto &node : graph.node()) {
      if (node.op_type() != "OneHot" || !placeValues.count(node.input(0)))
        continue;
      std::optional<int64_t> depth = scalar(node.input(1));
      if (!depth || (capacity && *depth != capacity))
        return "--capacity-factor: the slot OneHot '" + node.name() + "' has " +
               (depth ? "another capacity than the others"
                      : "no constant depth (the capacity)");
      capacity = *depth;
      slots.push_back(&node);
    }
    if (!capacity)
      return "--capacity-factor: the places of the mixture at node '" +
             places[0]->name() +
             "' are no OneHot's indices: no capacity to rewrite";
    int64_t to = static_cast<int64_t>(
        std::ceil(factor * k * tokens / static_cast<double>(experts) - 1e-9));
    to = std::max<int64_t>(to, 1);
    done = {static_cast<int64_t>(slots.size()), tokens, capacity, to};
    if (to == capacity)
      return "";
    for (const onnx::NodeProto *slot : slots)
      replaceInput(*slot, 1, scalarLike(slot->input(1), to));
    // The comparisons of the places with the capacity.
    std::set<const onnx::NodeProto *> handled;
    for (const onnx::NodeProto &node : graph.node()) {
      if (node.input_size() != 2)
        continue;
      StringRef op = node.op_type();
      int constantSide = op == "Less" || op == "GreaterOrEqual"   ? 1
                         : op == "Greater" || op == "LessOrEqual" ? 0
                                                                  : -1;
      if (constantSide < 0 || !placeValues.count(node.input(1 - constantSide)))
        continue;
      if (scalar(node.input(constantSide)) != capacity)
        continue;
      replaceInput(node, constantSide,
                   scalarLike(node.input(constantSide), to));
      handled.insert(&node);
    }
    // What the slots make: zeros of its shape are resized; any other
    // constant holding the capacity is an error.
    std::set<std::string> slotValues;
    for (const onnx::NodeProto *slot : slots)
      forwardSlice(slot->output(0), slotValues, capacity);
    std::set<const onnx::NodeProto *> readers;
    for (const std::string &value : slotValues)
      for (const onnx::NodeProto *reader : consumers.lookup(value))
        readers.insert(reader);
    for (const onnx::NodeProto *reader : readers) {
      if (handled.count(reader))
        continue;
      for (int i = 0; i < reader->input_size(); ++i) {
        const std::string &input = reader->input(i);
        if (input.empty() || slotValues.count(input) ||
            placeValues.count(input))
          continue;
        std::string error = resize(*reader, i, capacity, to);
        if (!error.empty())
          return error;
      }
    }
    // The new Constant nodes first: the importer reads nodes in order.
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (onnx::NodeProto &node : added)
      *nodes.Add() = std::move(node);
    for (onnx::NodeProto &node : *graph.mutable_node())
      *nodes.Add() = std::move(node);
    graph.mutable_node()->Swap(&nodes);
    return "";
  }

private:
  using StringRef = llvm::StringRef;

  /// A Constant node's or an initializer's value.
  std::optional<Tensor> constant(const std::string &name) {
    const onnx::TensorProto *proto = nullptr;
    if (const onnx::NodeProto *node = producer.lookup(name)) {
      if (node->op_type() != "Constant")
        return std::nullopt;
      for (const onnx::AttributeProto &attr : node->attribute()) {
        if (attr.name() == "value")
          proto = &attr.t();
        else if (attr.name() == "value_int") {
          Tensor value(DType::I64, {});
          value.ints()[0] = attr.i();
          return value;
        }
      }
    } else if (auto it = initializers.find(name); it != initializers.end()) {
      proto = it->second;
    }
    if (!proto)
      return std::nullopt;
    std::string error;
    return tensorFromProto(*proto, "", error);
  }

  /// A constant integer holding one element (maybe reshaped or cast, as
  /// exporters write TopK's k).
  std::optional<int64_t> scalar(std::string name) {
    for (int hops = 0; hops < 4; ++hops) {
      if (std::optional<Tensor> value = constant(name))
        return value->numElements() == 1 && !value->isFloat()
                   ? std::optional<int64_t>(value->intAt(0))
                   : std::nullopt;
      const onnx::NodeProto *node = producer.lookup(name);
      if (!node || node->input_size() == 0 ||
          !llvm::is_contained(
              {"Reshape", "Squeeze", "Unsqueeze", "Cast", "Identity"},
              node->op_type()))
        return std::nullopt;
      name = node->input(0);
    }
    return std::nullopt;
  }

  /// The k of the TopK a chosen expert's index comes from (through the
  /// Gather of one choice, casts and reshapes).
  std::optional<int64_t> topK(std::string value) {
    for (int hops = 0; hops < 8; ++hops) {
      const onnx::NodeProto *node = producer.lookup(value);
      if (!node)
        return std::nullopt;
      if (node->op_type() == "TopK")
        return node->input_size() > 1 ? scalar(node->input(1)) : std::nullopt;
      if (node->input_size() == 0)
        return std::nullopt;
      value = node->input(0);
    }
    return std::nullopt;
  }

  /// Adds to `values` what the routing computes from `from`, up to the
  /// dispatch and combine products (Einsum, MatMul), past which the model
  /// goes on, and, for the places, the slot OneHots; with `dim`, not
  /// through values known to have no dimension of that size.
  void forwardSlice(const std::string &from, std::set<std::string> &values,
                    int64_t dim = 0) {
    std::deque<std::string> work{from};
    values.insert(from);
    while (!work.empty()) {
      std::string value = work.front();
      work.pop_front();
      for (const onnx::NodeProto *node : consumers.lookup(value)) {
        if (llvm::is_contained({"Einsum", "MatMul", "Gemm"}, node->op_type()) ||
            (!dim && node->op_type() == "OneHot"))
          continue;
        for (const std::string &output : node->output()) {
          if (output.empty() || values.count(output))
            continue;
          // (A node the import folded away has no shape: go on.)
          if (auto shape = shapes.find(output);
              dim && shape != shapes.end() &&
              !llvm::is_contained(shape->second, dim))
            continue;
          values.insert(output);
          work.push_back(output);
        }
      }
    }
  }

  /// Input `i` of `reader`, where it is a constant holding the capacity:
  /// zeros with one dimension of it (a constant, or a ConstantOfShape of a
  /// computed shape) get the new one; anything else is an error.
  std::string resize(const onnx::NodeProto &reader, int i, int64_t from,
                     int64_t to) {
    const std::string &input = reader.input(i);
    Shape shape;
    bool zeros, holds = false;
    int32_t type = onnx::TensorProto::FLOAT;
    const onnx::NodeProto *node = producer.lookup(input);
    if (std::optional<Tensor> value = constant(input)) {
      shape = value->shape();
      auto elements = llvm::seq<int64_t>(0, value->numElements());
      zeros =
          llvm::all_of(elements, [&](int64_t e) { return value->at(e) == 0; });
      holds = !value->isFloat() && llvm::any_of(elements, [&](int64_t e) {
        return value->intAt(e) == from;
      });
      type = dataType(input);
    } else if (node && node->op_type() == "ConstantOfShape") {
      auto known = shapes.find(input);
      if (known == shapes.end())
        return "--capacity-factor: cannot tell the shape of node '" +
               node->name() + "' (ConstantOfShape)";
      shape = known->second;
      zeros = true;
      for (const onnx::AttributeProto &attr : node->attribute())
        if (attr.name() == "value") {
          std::string error;
          std::optional<Tensor> fill = tensorFromProto(attr.t(), "", error);
          zeros = fill && fill->numElements() == 1 && fill->at(0) == 0;
          type = attr.t().data_type();
        }
    } else {
      return "";
    }
    std::vector<size_t> dims;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == from)
        dims.push_back(d);
    if (dims.empty() && !holds)
      return "";
    if (!zeros || dims.size() != 1)
      return "--capacity-factor: node '" + reader.name() + "' (" +
             reader.op_type() + ") reads a constant holding the capacity " +
             std::to_string(from) + (zeros ? " in several dimensions" : "") +
             ", which dtc cannot rewrite; export the model with the "
             "capacity you want instead";
    shape[dims[0]] = to;
    // Zeros of the new shape, as a ConstantOfShape (never materialized).
    onnx::TensorProto dims64;
    dims64.set_data_type(onnx::TensorProto::INT64);
    dims64.add_dims(shape.size());
    for (int64_t d : shape)
      dims64.add_int64_data(d);
    std::string shapeName = addConstant(input, std::move(dims64));
    onnx::NodeProto &fill = added.emplace_back();
    fill.set_op_type("ConstantOfShape");
    fill.set_name(input + "_capacity_" + std::to_string(added.size()));
    fill.add_input(shapeName);
    fill.add_output(fill.name());
    onnx::AttributeProto *value = fill.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(type);
    value->mutable_t()->add_dims(1);
    std::optional<DType> dtype = dtypeFromOnnx(type);
    value->mutable_t()->set_raw_data(std::string(dtypeSize(*dtype), '\0'));
    const_cast<onnx::NodeProto &>(reader).set_input(i, fill.name());
    return "";
  }

  /// The ONNX data type of a constant.
  int32_t dataType(const std::string &name) {
    if (const onnx::NodeProto *node = producer.lookup(name)) {
      for (const onnx::AttributeProto &attr : node->attribute())
        if (attr.name() == "value")
          return attr.t().data_type();
      return onnx::TensorProto::INT64;
    }
    return initializers.at(name)->data_type();
  }

  /// A scalar of `like`'s data type and shape holding `value`.
  onnx::TensorProto scalarLike(const std::string &like, int64_t value) {
    std::optional<Tensor> old = constant(like);
    onnx::TensorProto proto;
    proto.set_data_type(dataType(like));
    for (int64_t d : old->shape())
      proto.add_dims(d);
    if (proto.data_type() == onnx::TensorProto::INT32)
      proto.add_int32_data(static_cast<int32_t>(value));
    else if (proto.data_type() == onnx::TensorProto::FLOAT)
      proto.add_float_data(static_cast<float>(value));
    else if (proto.data_type() == onnx::TensorProto::DOUBLE)
      proto.add_double_data(static_cast<double>(value));
    else
      proto.add_int64_data(value);
    return proto;
  }

  /// A new Constant node holding `value`, named after `like`; its output.
  std::string addConstant(const std::string &like, onnx::TensorProto value) {
    std::string name = like + "_capacity_" + std::to_string(added.size());
    onnx::NodeProto &node = added.emplace_back();
    node.set_op_type("Constant");
    node.set_name(name);
    node.add_output(name);
    onnx::AttributeProto *attr = node.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = std::move(value);
    return name;
  }

  /// Makes input `i` of `reader` a new Constant node holding `value`.
  void replaceInput(const onnx::NodeProto &reader, int i,
                    onnx::TensorProto value) {
    std::string name = addConstant(reader.input(i), std::move(value));
    const_cast<onnx::NodeProto &>(reader).set_input(i, name);
  }

  onnx::GraphProto &graph;
  const std::map<std::string, Shape> &shapes;
  llvm::StringMap<const onnx::NodeProto *> producer;
  llvm::StringMap<std::vector<const onnx::NodeProto *>> consumers;
  std::map<std::string, const onnx::TensorProto *> initializers;
  std::vector<onnx::NodeProto> added;
};

} // namespace

std::string
mlir::dtc::rewriteCapacity(onnx::GraphProto &graph, double factor,
                           const std::map<std::string, Shape> &shapes,
                           CapacityRewrite &done) {
  return CapacityRewriter(graph, shapes).run(factor, done);
}
