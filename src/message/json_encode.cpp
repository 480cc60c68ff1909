#include "tensogram/message/json_encode.hpp"

#include <span>

#include "tensogram/cbor/json.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/message/encode.hpp"

namespace tensogram {

namespace {
// One descriptor object of spec 04 §C.3: every key but the fixed ones is a
// parameter; only `byte_order` is defaulted (to host order).
data_object_descriptor descriptor_from_json(const nlohmann::json& d) {
  if (!d.is_object()) throw metadata_error("each descriptor must be an object");
  data_object_descriptor desc = data_object_descriptor::from_cbor(cbor::from_json(d));
  if (!desc.byte_order) desc.byte_order = native_byte_order();
  return desc;
}
}  // namespace

data_object_descriptor parse_descriptor_json(const std::string& descriptor_json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(descriptor_json);
  } catch (const nlohmann::json::exception& e) {
    throw metadata_error(std::string("invalid descriptor JSON: ") + e.what());
  }
  return descriptor_from_json(j);
}

json_message_spec parse_message_json(const std::string& metadata_json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(metadata_json);
  } catch (const nlohmann::json::exception& e) {
    throw metadata_error(std::string("invalid metadata JSON: ") + e.what());
  }
  if (!j.is_object()) throw metadata_error("metadata JSON must be an object");
  if (j.contains("extra") && j.contains("_extra_")) {
    throw metadata_error("metadata JSON has both 'extra' and '_extra_'");
  }
  json_message_spec spec;
  cbor::value free_form = cbor::value::make_map();
  for (const auto& [key, val] : j.items()) {
    if (key == "descriptors") {
      if (!val.is_array()) throw metadata_error("'descriptors' must be an array");
      for (const auto& d : val) spec.descriptors.push_back(descriptor_from_json(d));
    } else if (key == "base") {
      if (!val.is_array()) throw metadata_error("'base' must be an array");
      for (const auto& entry : val) {
        if (!entry.is_object()) throw metadata_error("each 'base' entry must be an object");
        spec.metadata.base.push_back(cbor::from_json(entry));
      }
    } else if (key == "_extra_" || key == "extra") {
      if (!val.is_object()) throw metadata_error("'" + key + "' must be an object");
      spec.metadata.extra = cbor::from_json(val);
    } else if (key == "_reserved_") {
      if (!val.is_object() || !val.empty()) {
        throw metadata_error("client code must not write to '_reserved_' at message level");
      }
    } else {
      free_form.set(key, cbor::from_json(val));
    }
  }
  // Remaining keys join _extra_; explicit _extra_ entries win (spec 04 §C.3).
  for (const cbor::map_entry& e : *free_form.as_map()) {
    const std::string& k = *e.key.as_text();
    if (!spec.metadata.extra.contains(k)) spec.metadata.extra.set(k, e.val);
  }
  return spec;
}

global_metadata parse_streaming_metadata_json(const std::string& metadata_json) {
  json_message_spec spec = parse_message_json(metadata_json);
  if (!spec.descriptors.empty()) {
    throw metadata_error(
        "streaming encoder metadata JSON must not contain 'descriptors': each object's descriptor is given "
        "to write_object");
  }
  return std::move(spec.metadata);
}

namespace {
std::vector<std::uint8_t> encode_json(const std::string& metadata_json,
                                      const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
                                      const encode_options& options, bool pre_encoded) {
  json_message_spec spec = parse_message_json(metadata_json);
  if (spec.descriptors.size() != objects.size()) {
    throw metadata_error("metadata JSON has " + std::to_string(spec.descriptors.size()) +
                         " descriptors but " + std::to_string(objects.size()) + " objects were given");
  }
  std::vector<object_input> inputs;
  inputs.reserve(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const auto& [ptr, len] = objects[i];
    if (ptr == nullptr && len != 0)
      throw invalid_arg_error("object " + std::to_string(i) + " has a null pointer");
    inputs.push_back(object_input{std::move(spec.descriptors[i]),
                                  std::span<const std::byte>(reinterpret_cast<const std::byte*>(ptr), len)});
  }
  const std::vector<std::byte> out = pre_encoded
                                         ? tensogram::encode_pre_encoded(spec.metadata, inputs, options)
                                         : tensogram::encode(spec.metadata, inputs, options);
  const auto* b = reinterpret_cast<const std::uint8_t*>(out.data());
  return std::vector<std::uint8_t>(b, b + out.size());
}
}  // namespace

std::vector<std::uint8_t> encode(const std::string& metadata_json,
                                 const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
                                 const encode_options& options) {
  return encode_json(metadata_json, objects, options, false);
}

std::vector<std::uint8_t> encode_pre_encoded(
    const std::string& metadata_json, const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
    const encode_options& options) {
  return encode_json(metadata_json, objects, options, true);
}

}  // namespace tensogram
