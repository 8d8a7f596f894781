// schema.cc -- type schemas: their JSON, their names, and value conversion to them.
#include "schema.h"

#include <cstring>

namespace tvm_ffi_testing {

const char kDLTensorNotOwned[] =
    "DLTensor* cannot be held in Any as it does not retain ownership, use Tensor instead";

namespace {

SchemaRef Make(Schema::Kind kind, std::vector<SchemaRef> args = {}, std::string key = "",
               bool nullable = false) {
  auto schema = std::make_shared<Schema>();
  schema->kind = kind;
  schema->key = std::move(key);
  schema->nullable = nullable;
  schema->args = std::move(args);
  return schema;
}

const char* ContainerKey(Schema::Kind kind) {
  switch (kind) {
    case Schema::kArray: return "ffi.Array";
    case Schema::kList: return "ffi.List";
    case Schema::kMap: return "ffi.Map";
    default: return "ffi.Dict";
  }
}

// The short name of a container in a type name and in a mismatch: Array, List, Map, Dict.
const char* ContainerName(Schema::Kind kind) { return ContainerKey(kind) + 4; }

int32_t ContainerIndex(Schema::Kind kind) {
  switch (kind) {
    case Schema::kArray: return kTVMFFIArray;
    case Schema::kList: return kTVMFFIList;
    case Schema::kMap: return kTVMFFIMap;
    default: return kTVMFFIDict;
  }
}

std::string JoinJson(const std::vector<SchemaRef>& items, size_t begin = 0) {
  std::string out;
  for (size_t i = begin; i < items.size(); ++i) {
    if (i > begin) out += ",";
    out += items[i]->Json();
  }
  return out;
}

std::string NumberedParams(const std::vector<SchemaRef>& params) {
  std::string out = "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(i) + ": " + params[i]->Str();
  }
  return out + ")";
}

// The index of an object schema's type key, looked up on first use.
int32_t TargetIndex(const Schema& schema) {
  return schema.key == "ffi.Object" ? static_cast<int32_t>(kTVMFFIObject)
                                    : TypeIndexOf(schema.key.c_str());
}

bool IsObjectOf(const Schema& schema, const TVMFFIAny& value) {
  if (value.type_index == kTVMFFINone) return schema.nullable;
  return value.type_index >= kTVMFFIStaticObjectBegin &&
         IsInstanceOf(value.type_index, TargetIndex(schema));
}

bool Strict(const Schema& schema, const TVMFFIAny& value);

bool AllStrict(const Schema& schema, const TVMFFIAny& value) {
  if (schema.args.empty()) return true;
  if (schema.kind == Schema::kArray || schema.kind == Schema::kList) {
    const TVMFFISeqCell* cell = SeqCell(value.v_obj);
    const TVMFFIAny* items = static_cast<const TVMFFIAny*>(cell->data);
    for (int64_t i = 0; i < cell->size; ++i) {
      if (!Strict(*schema.args[0], items[i])) return false;
    }
    return true;
  }
  Value map = Value::FromHandle(value.v_obj);
  for (const auto& item : MapItems(map)) {
    if (!Strict(*schema.args[0], item.first.raw()) || !Strict(*schema.args[1], item.second.raw())) {
      return false;
    }
  }
  return true;
}

// Whether a value already has the schema's type, with no conversion (CheckAnyStrict).
bool Strict(const Schema& schema, const TVMFFIAny& value) {
  int32_t index = value.type_index;
  switch (schema.kind) {
    case Schema::kAny: return true;
    case Schema::kVoid: return index == kTVMFFINone;
    case Schema::kInt: return index == kTVMFFIInt;
    case Schema::kFloat: return index == kTVMFFIFloat;
    case Schema::kBool: return index == kTVMFFIBool;
    case Schema::kDevice: return index == kTVMFFIDevice;
    case Schema::kDType: return index == kTVMFFIDataType;
    case Schema::kStr: return IsStr(value);
    case Schema::kBytes: return index == kTVMFFISmallBytes || index == kTVMFFIBytes;
    case Schema::kFunction: return index == kTVMFFIFunction;
    case Schema::kObject: return IsObjectOf(schema, value);
    case Schema::kArray:
    case Schema::kList:
    case Schema::kMap:
    case Schema::kDict: return index == ContainerIndex(schema.kind) && AllStrict(schema, value);
    case Schema::kOptional: return index == kTVMFFINone || Strict(*schema.args[0], value);
    case Schema::kVariant:
      for (const SchemaRef& alternative : schema.args) {
        if (Strict(*alternative, value)) return true;
      }
      return false;
    case Schema::kDLTensor: return index == kTVMFFIDLTensorPtr;
    case Schema::kTensor: return index == kTVMFFITensor;
  }
  return false;
}

// A device name as upstream's TryStringViewToDLDevice reads it: `name` or `name:index`,
// anything after a space ignored.
bool ParseDevice(std::string text, DLDevice* out) {
  static const struct {
    const char* name;
    DLDeviceType type;
  } kNames[] = {{"cpu", kDLCPU},     {"cuda", kDLCUDA},       {"opencl", kDLOpenCL},
                {"vulkan", kDLVulkan}, {"metal", kDLMetal},   {"mps", kDLMetal},
                {"vpi", kDLVPI},     {"rocm", kDLROCM},       {"ext_dev", kDLExtDev},
                {"hexagon", kDLHexagon}, {"wgpu", kDLWebGPU}, {"webgpu", kDLWebGPU},
                {"maia", kDLMAIA},   {"trn", kDLTrn}};
  text = text.substr(0, text.find(' '));
  size_t colon = text.find(':');
  std::string name = text.substr(0, colon);
  if (name.empty()) return false;
  if (colon != std::string::npos && text.find(':', colon + 1) != std::string::npos) return false;
  const DLDeviceType* type = nullptr;
  for (const auto& entry : kNames) {
    if (name == entry.name) type = &entry.type;
  }
  if (type == nullptr) return false;
  int64_t index = 0;
  if (colon != std::string::npos) {
    std::string digits = text.substr(colon + 1);
    if (digits.empty()) return false;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      index = index * 10 + (c - '0');
      if (index > INT32_MAX) return false;
    }
  }
  out->device_type = *type;
  out->device_id = static_cast<int32_t>(index);
  return true;
}

bool ConvertSeq(const Schema& schema, const TVMFFIAny& value, Value* out, std::string* mismatch) {
  bool is_seq = value.type_index == kTVMFFIArray || value.type_index == kTVMFFIList;
  if (schema.args.empty() || !is_seq) {  // untyped: the container itself, nothing else
    if (value.type_index != ContainerIndex(schema.kind)) return false;
    *out = Value::Copy(value);
    return true;
  }
  if (value.type_index == ContainerIndex(schema.kind) && AllStrict(schema, value)) {
    *out = Value::Copy(value);
    return true;
  }
  const TVMFFISeqCell* cell = SeqCell(value.v_obj);
  const TVMFFIAny* items = static_cast<const TVMFFIAny*>(cell->data);
  std::vector<Value> converted(static_cast<size_t>(cell->size));
  for (int64_t i = 0; i < cell->size; ++i) {
    std::string inner;
    if (!Convert(*schema.args[0], items[i], &converted[i], &inner)) {
      *mismatch = std::string(ContainerName(schema.kind)) + "[index " + std::to_string(i) + ": " +
                  inner + "]";
      return false;
    }
  }
  *out = MakeSeq(schema.kind == Schema::kArray ? "ffi.Array" : "ffi.List", converted);
  return true;
}

bool ConvertMap(const Schema& schema, const TVMFFIAny& value, Value* out, std::string* mismatch) {
  bool is_map = value.type_index == kTVMFFIMap || value.type_index == kTVMFFIDict;
  if (schema.args.empty() || !is_map) {
    if (value.type_index != ContainerIndex(schema.kind)) return false;
    *out = Value::Copy(value);
    return true;
  }
  if (value.type_index == ContainerIndex(schema.kind) && AllStrict(schema, value)) {
    *out = Value::Copy(value);
    return true;
  }
  std::vector<std::pair<Value, Value>> items = MapItems(Value::FromHandle(value.v_obj));
  for (auto& item : items) {
    Value key, mapped;
    std::string inner;
    if (!Convert(*schema.args[0], item.first.raw(), &key, &inner)) {
      *mismatch = std::string(ContainerName(schema.kind)) + "[some key is " + inner + ", V]";
      return false;
    }
    if (!Convert(*schema.args[1], item.second.raw(), &mapped, &inner)) {
      *mismatch = std::string(ContainerName(schema.kind)) + "[K, some value is " + inner + "]";
      return false;
    }
    item = std::make_pair(std::move(key), std::move(mapped));
  }
  *out = MakeMap(schema.kind == Schema::kMap ? "ffi.Map" : "ffi.Dict", items);
  return true;
}

bool ConvertScalar(const Schema& schema, const TVMFFIAny& value, Value* out) {
  int32_t index = value.type_index;
  bool is_int = index == kTVMFFIInt || index == kTVMFFIBool;
  TVMFFIByteArray text;
  switch (schema.kind) {
    case Schema::kInt:
      if (is_int) *out = Value::Int(value.v_int64);
      return is_int;
    case Schema::kFloat:
      if (index == kTVMFFIFloat) *out = Value::Float(value.v_float64);
      if (is_int) *out = Value::Float(static_cast<double>(value.v_int64));
      return is_int || index == kTVMFFIFloat;
    case Schema::kBool:
      if (is_int) *out = Value::Bool(value.v_int64 != 0);
      return is_int;
    case Schema::kDevice: {
      DLDevice device;
      if (index == kTVMFFIDevice) {
        *out = Value::Device(value.v_device);
        return true;
      }
      if (!StrView(value, false, &text) || !ParseDevice(std::string(text.data, text.size), &device)) {
        return false;
      }
      *out = Value::Device(device);
      return true;
    }
    case Schema::kDType: {
      DLDataType dtype;
      if (index == kTVMFFIDataType) {
        *out = Value::DType(value.v_dtype);
        return true;
      }
      if (!StrView(value, false, &text)) return false;
      Check(TVMFFIDataTypeFromString(&text, &dtype));  // a bad name is the parser's error
      *out = Value::DType(dtype);
      return true;
    }
    case Schema::kStr:
      if (!IsStr(value) && index != kTVMFFIRawStr) return false;
      *out = Value::Copy(value);
      return true;
    case Schema::kBytes:
      if (index != kTVMFFISmallBytes && index != kTVMFFIBytes && index != kTVMFFIByteArrayPtr) {
        return false;
      }
      *out = Value::Copy(value);
      return true;
    case Schema::kDLTensor:
      if (index == kTVMFFIDLTensorPtr) *out = Value::TensorPtr(static_cast<DLTensor*>(value.v_ptr));
      if (index == kTVMFFITensor) *out = Value::TensorPtr(TensorCell(value.v_obj));
      return index == kTVMFFIDLTensorPtr || index == kTVMFFITensor;
    default:  // the kinds that take only values that are already of the type
      if (!Strict(schema, value)) return false;
      *out = Value::Copy(value);
      return true;
  }
}

}  // namespace

bool Convert(const Schema& schema, const TVMFFIAny& value, Value* out, std::string* mismatch) {
  bool done;
  switch (schema.kind) {
    case Schema::kAny:
      if (value.type_index == kTVMFFIDLTensorPtr) {
        Throw("RuntimeError", kDLTensorNotOwned);
      }
      *out = Value::Copy(value);
      return true;
    case Schema::kArray:
    case Schema::kList: done = ConvertSeq(schema, value, out, mismatch); break;
    case Schema::kMap:
    case Schema::kDict: done = ConvertMap(schema, value, out, mismatch); break;
    case Schema::kOptional:
      if (value.type_index == kTVMFFINone) {
        *out = Value();
        return true;
      }
      return Convert(*schema.args[0], value, out, mismatch);
    case Schema::kVariant:
      done = false;
      for (const SchemaRef& alternative : schema.args) {
        if (Strict(*alternative, value)) {
          *out = Value::Copy(value);
          return true;
        }
      }
      for (const SchemaRef& alternative : schema.args) {
        std::string ignored;
        if (Convert(*alternative, value, out, &ignored)) return true;
      }
      mismatch->clear();
      break;
    default: done = ConvertScalar(schema, value, out);
  }
  if (!done && mismatch->empty()) *mismatch = TypeKeyOf(value.type_index);
  return done;
}

Value ConvertOrThrow(const Schema& schema, const TVMFFIAny& value) {
  Value out;
  std::string mismatch;
  if (!Convert(schema, value, &out, &mismatch)) {
    Throw("TypeError", "Cannot convert from type `" + mismatch + "` to `" + schema.Str() + "`");
  }
  return out;
}

// ---------------------------------------------------------------- names and JSON

std::string Schema::Json() const {
  std::string type;
  switch (kind) {
    case kAny: type = "Any"; break;
    case kVoid: type = "None"; break;
    case kInt: type = "int"; break;
    case kFloat: type = "float"; break;
    case kBool: type = "bool"; break;
    case kDevice: type = "Device"; break;
    case kDType: type = "DataType"; break;
    case kStr: type = "ffi.String"; break;
    case kBytes: type = "ffi.Bytes"; break;
    case kFunction:
      if (args.empty()) return "{\"type\":\"ffi.Function\"}";
      return FunctionSchemaJson(args[0], std::vector<SchemaRef>(args.begin() + 1, args.end()));
    case kObject: type = key; break;
    case kArray:
    case kList:
    case kMap:
    case kDict: type = ContainerKey(kind); break;
    case kOptional: type = "Optional"; break;
    case kVariant: type = "Variant"; break;
    case kDLTensor: type = "DLTensor*"; break;
    case kTensor: type = "ffi.Tensor"; break;
  }
  std::string out = "{\"type\":\"" + type + "\"";
  if (!args.empty()) out += ",\"args\":[" + JoinJson(args) + "]";
  return out + "}";
}

std::string Schema::Str() const {
  switch (kind) {
    case kAny: return "Any";
    case kVoid: return "void";
    case kInt: return "int";
    case kFloat: return "float";
    case kBool: return "bool";
    case kDevice: return "Device";
    case kDType: return "DataType";
    case kStr: return "str";
    case kBytes: return "bytes";
    case kFunction:
      if (args.empty()) return "ffi.Function";
      return NumberedParams(std::vector<SchemaRef>(args.begin() + 1, args.end())) + " -> " +
             args[0]->Str();
    case kObject: return key;
    case kDLTensor: return "DLTensor*";
    case kTensor: return "ffi.Tensor";
    default: break;
  }
  std::string name = kind == kOptional  ? "Optional"
                     : kind == kVariant ? "Variant"
                                        : ContainerName(kind);
  if (args.empty()) return ContainerKey(kind);
  std::string out = name + "<";
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i]->Str();
  return out + ">";
}

int32_t Schema::FieldStaticTypeIndex() const {
  switch (kind) {
    case kInt: return kTVMFFIInt;
    case kFloat: return kTVMFFIFloat;
    case kBool: return kTVMFFIBool;
    case kDevice: return kTVMFFIDevice;
    case kDType: return kTVMFFIDataType;
    case kArray: return kTVMFFIArray;
    case kObject:
    case kMap: return kTVMFFIObject;
    case kOptional: return args[0]->kind == kObject ? kTVMFFIObject : kTVMFFIAny;
    default: return kTVMFFIAny;
  }
}

std::string Signature(const std::string& name, const SchemaRef& result,
                      const std::vector<SchemaRef>& params) {
  return name + NumberedParams(params) + " -> " + result->Str();
}

std::string FunctionSchemaJson(const SchemaRef& result, const std::vector<SchemaRef>& params) {
  return "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[" + result->Json() +
         "],\"params\":[" + JoinJson(params) + "]}}";
}

// ---------------------------------------------------------------- constructors

namespace S {
SchemaRef Any() { return Make(Schema::kAny); }
SchemaRef Void() { return Make(Schema::kVoid); }
SchemaRef Int() { return Make(Schema::kInt); }
SchemaRef Float() { return Make(Schema::kFloat); }
SchemaRef Bool() { return Make(Schema::kBool); }
SchemaRef Device() { return Make(Schema::kDevice); }
SchemaRef DType() { return Make(Schema::kDType); }
SchemaRef Str() { return Make(Schema::kStr); }
SchemaRef Bytes() { return Make(Schema::kBytes); }
SchemaRef Function() { return Make(Schema::kFunction); }
SchemaRef TypedFunction(SchemaRef result, std::vector<SchemaRef> params) {
  params.insert(params.begin(), std::move(result));
  return Make(Schema::kFunction, std::move(params));
}
SchemaRef Object(const std::string& type_key, bool nullable) {
  return Make(Schema::kObject, {}, type_key, nullable);
}
SchemaRef Array(SchemaRef element) {
  return element ? Make(Schema::kArray, {std::move(element)}) : Make(Schema::kArray);
}
SchemaRef List(SchemaRef element) { return Make(Schema::kList, {std::move(element)}); }
SchemaRef Map(SchemaRef key, SchemaRef value) {
  return key ? Make(Schema::kMap, {std::move(key), std::move(value)}) : Make(Schema::kMap);
}
SchemaRef Dict(SchemaRef key, SchemaRef value) {
  return Make(Schema::kDict, {std::move(key), std::move(value)});
}
SchemaRef Optional(SchemaRef inner) { return Make(Schema::kOptional, {std::move(inner)}); }
SchemaRef Variant(std::vector<SchemaRef> alternatives) {
  return Make(Schema::kVariant, std::move(alternatives));
}
SchemaRef DLTensor() { return Make(Schema::kDLTensor); }
SchemaRef Tensor() { return Make(Schema::kTensor); }
}  // namespace S

}  // namespace tvm_ffi_testing
