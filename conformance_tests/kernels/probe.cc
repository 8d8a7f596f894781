// The conformance probe: reports, as JSON text, exactly what a kernel receives.
//
// Compiled at test time against upstream's headers. Everything is read from
// memory through the C ABI structs (c_api.h) and the container layouts C++
// code compiled from upstream's headers relies on (map_base.h, tensor.h),
// never through a front end, so the report is the same question under every
// runtime:
//
//   dump(*args)          -> one JSON record per argument (see DumpAny)
//   forge(raw, obj, st)  -> returns the 16 bytes `raw` as its TVMFFIAny result
//                           (the payload replaced by `obj` when `obj` is an
//                           object), with status `st`: a result decoder's input
//   strong_counts(*args) -> JSON list of the strong count of each argument
//
// Pointers never appear in a report (they differ between processes); where a
// pointer matters, the report says what it points at: NULL, an offset inside
// the object itself ("self+40"), or somewhere else ("ext"), plus the content.
#include <tvm/ffi/c_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

namespace {

constexpr size_t kHeader = sizeof(TVMFFIObject);  // 24

std::string Hex(const void* data, size_t size) {
  static const char digits[] = "0123456789abcdef";
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

std::string Q(const std::string& text) { return "\"" + text + "\""; }  // text is never escaped
std::string I(int64_t v) { return std::to_string(v); }
std::string U(uint64_t v) { return std::to_string(v); }

// Where a pointer found in an object points: NULL, exactly at the inline
// storage the layout reserves for it ("inline", at the given offset from the
// object's start), or elsewhere ("ext"). Only exact equality counts as
// inline: a separate buffer that happens to follow the object in memory is
// "ext" as it should be.
std::string Where(const void* object, size_t inline_offset, const void* target) {
  if (target == nullptr) return Q("null");
  if (static_cast<const char*>(target) == static_cast<const char*>(object) + inline_offset) {
    return Q("inline+" + U(inline_offset));
  }
  return Q("ext");
}

std::string TypeKey(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == nullptr) {
    TVMFFIObjectHandle err = nullptr;  // discard the lookup's error
    TVMFFIErrorMoveFromRaised(&err);
    if (err != nullptr) TVMFFIObjectDecRef(err);
    return "<unregistered>";
  }
  return std::string(info->type_key.data, info->type_key.size);
}

struct State {
  std::map<const void*, int> seen;  // object -> order of first sight (sharing and cycles)
  int depth = 0;
};

std::string DumpAny(const TVMFFIAny* value, State* state);

std::string DumpBytesCell(const char* obj, std::string* body) {
  const TVMFFIByteArray* cell = reinterpret_cast<const TVMFFIByteArray*>(obj + kHeader);
  *body += ",\"size\":" + U(cell->size);
  *body += ",\"data\":" + Where(obj, kHeader + sizeof(TVMFFIByteArray), cell->data);
  // The content and its terminating NUL (the header promises one).
  *body += ",\"content\":" + Q(cell->data ? Hex(cell->data, cell->size + 1) : "");
  return *body;
}

std::string DumpDLTensor(const DLTensor* t) {
  std::string out = "{\"device\":[" + I(t->device.device_type) + "," + I(t->device.device_id) + "]";
  out += ",\"ndim\":" + I(t->ndim);
  out += ",\"dtype\":[" + I(t->dtype.code) + "," + I(t->dtype.bits) + "," + I(t->dtype.lanes) + "]";
  out += ",\"byte_offset\":" + U(t->byte_offset);
  out += ",\"data\":" + Q(t->data ? "nonnull" : "null");
  // Where shape and strides are stored is the producer's business; NULL or not is ABI.
  out += ",\"shape_ptr\":" + Q(t->shape ? "set" : "null");
  out += ",\"strides_ptr\":" + Q(t->strides ? "set" : "null");
  std::string shape, strides;
  int64_t count = 1;
  for (int i = 0; i < t->ndim; ++i) {
    shape += (i ? "," : "") + I(t->shape[i]);
    if (t->strides) strides += (i ? "," : "") + I(t->strides[i]);
    count *= t->shape[i];
  }
  out += ",\"shape\":[" + shape + "],\"strides\":[" + strides + "]";
  // The elements in row-major logical order, read through the strides.
  size_t item = (static_cast<size_t>(t->dtype.bits) * t->dtype.lanes + 7) / 8;
  std::string elements;
  if (t->data != nullptr && count > 0 && count <= 4096) {
    int64_t index[8] = {0};
    for (int64_t n = 0; n < count; ++n) {
      int64_t offset = 0, contiguous = 1;
      for (int d = t->ndim - 1; d >= 0; --d) {
        offset += index[d] * (t->strides ? t->strides[d] : contiguous);
        contiguous *= t->shape[d];
      }
      const char* at = static_cast<const char*>(t->data) + t->byte_offset +
                       static_cast<int64_t>(offset * static_cast<int64_t>(item));
      elements += Hex(at, item);
      for (int d = t->ndim - 1; d >= 0; --d) {
        if (++index[d] < t->shape[d]) break;
        index[d] = 0;
      }
    }
  }
  out += ",\"elements\":" + Q(elements) + "}";
  return out;
}

std::string DumpSeq(const char* obj, State* state) {
  const TVMFFISeqCell* cell = reinterpret_cast<const TVMFFISeqCell*>(obj + kHeader);
  std::string out = ",\"size\":" + I(cell->size) + ",\"capacity\":" + I(cell->capacity);
  out += ",\"data\":" + Where(obj, kHeader + sizeof(TVMFFISeqCell), cell->data);
  out += ",\"data_deleter\":" + Q(cell->data_deleter ? "set" : "null");
  out += ",\"items\":[";
  const TVMFFIAny* items = static_cast<const TVMFFIAny*>(cell->data);
  for (int64_t i = 0; i < cell->size; ++i) out += (i ? "," : "") + DumpAny(items + i, state);
  return out + "]";
}

// MapBaseObj after the header: data_, size_, slots_ (bit 63: small form),
// data_deleter_; DenseMapBaseObj adds fib_shift_, iter_list_head_/tail_.
struct MapFields {
  void* data;
  uint64_t size;
  uint64_t slots;
  void* data_deleter;
};
struct DenseExtra {
  uint32_t fib_shift;
  uint64_t head;
  uint64_t tail;
};
constexpr uint64_t kSmallTag = uint64_t(1) << 63;
constexpr size_t kBlockCap = 16;
constexpr size_t kItemSize = 48;  // key, value, prev, next
constexpr size_t kBlockSize = kBlockCap + kBlockCap * kItemSize;

std::string DumpLink(uint64_t link) { return link == ~uint64_t(0) ? "-1" : U(link); }

std::string DumpMap(const char* obj, State* state) {
  const MapFields* f = reinterpret_cast<const MapFields*>(obj + kHeader);
  std::string out;
  if (f->slots & kSmallTag) {
    uint64_t slots = f->slots & ~kSmallTag;
    out += ",\"form\":\"small\",\"size\":" + U(f->size) + ",\"slots\":" + U(slots);
    out += ",\"data\":" + Where(obj, kHeader + sizeof(MapFields), f->data);
    out += ",\"data_deleter\":" + Q(f->data_deleter ? "set" : "null") + ",\"items\":[";
    const TVMFFIAny* kv = static_cast<const TVMFFIAny*>(f->data);
    for (uint64_t i = 0; i < f->size; ++i) {
      out += (i ? ",[" : "[") + DumpAny(kv + 2 * i, state) + "," + DumpAny(kv + 2 * i + 1, state) + "]";
    }
    return out + "]";
  }
  const DenseExtra* d = reinterpret_cast<const DenseExtra*>(obj + kHeader + sizeof(MapFields));
  out += ",\"form\":\"dense\",\"size\":" + U(f->size) + ",\"slots\":" + U(f->slots);
  out += ",\"fib_shift\":" + U(d->fib_shift) + ",\"head\":" + DumpLink(d->head) +
         ",\"tail\":" + DumpLink(d->tail);
  out += ",\"data_deleter\":" + Q(f->data_deleter ? "set" : "null");
  std::string meta, items;
  const char* data = static_cast<const char*>(f->data);
  for (uint64_t i = 0; data != nullptr && i < f->slots; ++i) {
    const char* block = data + (i / kBlockCap) * kBlockSize;
    uint8_t m = static_cast<uint8_t>(block[i % kBlockCap]);
    meta += Hex(&m, 1);
    if (m == 0xFF || m == 0xFE) continue;
    const char* item = block + kBlockCap + (i % kBlockCap) * kItemSize;
    const TVMFFIAny* kv = reinterpret_cast<const TVMFFIAny*>(item);
    const uint64_t* links = reinterpret_cast<const uint64_t*>(item + 32);
    items += (items.empty() ? "[" : ",[") + U(i) + "," + DumpAny(kv, state) + "," +
             DumpAny(kv + 1, state) + "," + DumpLink(links[0]) + "," + DumpLink(links[1]) + "]";
  }
  return out + ",\"meta\":" + Q(meta) + ",\"items\":[" + items + "]";
}

std::string DumpObject(const TVMFFIObject* header, State* state) {
  const char* obj = reinterpret_cast<const char*>(header);
  auto found = state->seen.find(obj);
  if (found != state->seen.end()) return "{\"same_as\":" + I(found->second) + "}";
  int order = static_cast<int>(state->seen.size());
  state->seen[obj] = order;
  if (++state->depth > 64) return "{\"too_deep\":true}";
  uint64_t counts = header->combined_ref_count;
  uint32_t padding;
  std::memcpy(&padding, obj + 12, 4);
  std::string out = "{\"id\":" + I(order) + ",\"key\":" + Q(TypeKey(header->type_index));
  out += ",\"ti\":" + I(header->type_index) + ",\"pad\":" + U(padding);
  out += ",\"strong\":" + U(counts & 0xFFFFFFFFu) + ",\"weak\":" + U(counts >> 32);
  out += ",\"deleter\":" + Q(header->deleter ? "set" : "null");
  switch (header->type_index) {
    case kTVMFFIStr:
    case kTVMFFIBytes:
      DumpBytesCell(obj, &out);
      break;
    case kTVMFFIBigInt: {
      uint64_t words;
      std::memcpy(&words, obj + kHeader, 8);
      out += ",\"words\":" + U(words);
      out += ",\"content\":" + Q(words < 4096 ? Hex(obj + kHeader + 8, words * 8) : "");
      break;
    }
    case kTVMFFIError: {
      const TVMFFIErrorCell* cell = reinterpret_cast<const TVMFFIErrorCell*>(obj + kHeader);
      out += ",\"kind\":" + Q(Hex(cell->kind.data, cell->kind.size));
      out += ",\"message\":" + Q(Hex(cell->message.data, cell->message.size));
      out += ",\"update_backtrace\":" + Q(cell->update_backtrace ? "set" : "null");
      out += ",\"cause_chain\":" + (cell->cause_chain ? DumpObject(static_cast<const TVMFFIObject*>(cell->cause_chain), state) : Q("null"));
      out += ",\"extra_context\":" + (cell->extra_context ? DumpObject(static_cast<const TVMFFIObject*>(cell->extra_context), state) : Q("null"));
      break;
    }
    case kTVMFFIFunction: {
      const TVMFFIFunctionCell* cell = reinterpret_cast<const TVMFFIFunctionCell*>(obj + kHeader);
      out += ",\"safe_call\":" + Q(cell->safe_call ? "set" : "null");
      out += ",\"cpp_call\":" + Q(cell->cpp_call ? "set" : "null");
      break;
    }
    case kTVMFFIShape: {
      const TVMFFIShapeCell* cell = reinterpret_cast<const TVMFFIShapeCell*>(obj + kHeader);
      out += ",\"size\":" + U(cell->size);
      out += ",\"data\":" + Where(obj, kHeader + sizeof(TVMFFIShapeCell), cell->data);
      out += ",\"dims\":[";
      for (size_t i = 0; i < cell->size; ++i) out += (i ? "," : "") + I(cell->data[i]);
      out += "]";
      break;
    }
    case kTVMFFITensor:
      out += ",\"tensor\":" + DumpDLTensor(reinterpret_cast<const DLTensor*>(obj + kHeader));
      break;
    case kTVMFFIArray:
    case kTVMFFIList:
      out += DumpSeq(obj, state);
      break;
    case kTVMFFIMap:
    case kTVMFFIDict:
      out += DumpMap(obj, state);
      break;
    case kTVMFFIOpaquePyObject: {
      const TVMFFIOpaqueObjectCell* cell = reinterpret_cast<const TVMFFIOpaqueObjectCell*>(obj + kHeader);
      out += ",\"handle\":" + Q(cell->handle ? "set" : "null");
      break;
    }
    default:
      break;
  }
  --state->depth;
  return out + "}";
}

std::string DumpAny(const TVMFFIAny* value, State* state) {
  uint32_t padding;
  std::memcpy(&padding, reinterpret_cast<const char*>(value) + 4, 4);
  std::string out = "{\"ti\":" + I(value->type_index) + ",\"pad\":" + U(padding);
  switch (value->type_index) {
    case kTVMFFIRawStr:
      out += ",\"raw_str\":" + Q(value->v_c_str ? Hex(value->v_c_str, std::strlen(value->v_c_str)) : "null");
      break;
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* array = static_cast<const TVMFFIByteArray*>(value->v_ptr);
      out += ",\"byte_array\":" + Q(array ? Hex(array->data, array->size) : "null");
      break;
    }
    case kTVMFFIDLTensorPtr:
      out += ",\"dltensor\":" + (value->v_ptr ? DumpDLTensor(static_cast<const DLTensor*>(value->v_ptr)) : Q("null"));
      break;
    case kTVMFFIObjectRValueRef: {
      TVMFFIObject* const* slot = static_cast<TVMFFIObject* const*>(value->v_ptr);
      out += ",\"rvalue_of\":" + (slot && *slot ? DumpObject(*slot, state) : Q("null"));
      break;
    }
    default:
      if (value->type_index >= kTVMFFIStaticObjectBegin) {
        out += ",\"obj\":" + (value->v_obj ? DumpObject(value->v_obj, state) : Q("null"));
      } else {
        // POD payloads (including an opaque pointer's value) are compared bit for bit.
        out += ",\"payload\":" + Q(Hex(&value->v_int64, 8));
      }
  }
  return out + "}";
}

int ReturnText(const std::string& text, TVMFFIAny* result) {
  TVMFFIByteArray array{text.data(), text.size()};
  return TVMFFIStringFromByteArray(&array, result);
}

}  // namespace

extern "C" {

TVM_FFI_DLL_EXPORT int __tvm_ffi_dump(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  State state;
  std::string out = "[";
  for (int32_t i = 0; i < num_args; ++i) out += (i ? "," : "") + DumpAny(args + i, &state);
  return ReturnText(out + "]", result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_strong_counts(void*, const TVMFFIAny* args, int32_t num_args,
                                               TVMFFIAny* result) {
  std::string out = "[";
  for (int32_t i = 0; i < num_args; ++i) {
    int64_t count = -1;
    if (args[i].type_index >= kTVMFFIStaticObjectBegin && args[i].v_obj != nullptr) {
      count = static_cast<int64_t>(args[i].v_obj->combined_ref_count & 0xFFFFFFFFu);
    }
    out += (i ? "," : "") + I(count);
  }
  return ReturnText(out + "]", result);
}

// forge(raw: bytes of 16, obj: any, status: int): the result decoder's input.
// When obj is an object, its pointer replaces the payload and the result owns
// one new reference to it; when raw claims kTVMFFIDLTensorPtr and obj is a
// Tensor, the payload points at the tensor's DLTensor instead (borrowed). A
// status of -1 leaves nothing raised.
TVM_FFI_DLL_EXPORT int __tvm_ffi_forge(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 3) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "forge(raw, obj, status) takes 3 arguments");
    return -1;
  }
  const char* data = nullptr;
  size_t size = 0;
  if (args[0].type_index == kTVMFFISmallBytes) {
    data = reinterpret_cast<const char*>(&args[0].v_int64);
    size = args[0].small_str_len;
  } else if (args[0].type_index == kTVMFFIBytes) {
    const TVMFFIByteArray* cell = reinterpret_cast<const TVMFFIByteArray*>(
        reinterpret_cast<const char*>(args[0].v_obj) + kHeader);
    data = cell->data;
    size = cell->size;
  }
  if (size != 16 || args[2].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "forge wants 16 bytes and an int status");
    return -1;
  }
  std::memcpy(result, data, 16);
  if (result->type_index == kTVMFFIDLTensorPtr && args[1].type_index == kTVMFFITensor) {
    // A borrowed view of the tensor's own DLTensor (it follows the object header).
    result->v_ptr = reinterpret_cast<char*>(args[1].v_obj) + kHeader;
  } else if (args[1].type_index >= kTVMFFIStaticObjectBegin) {
    result->v_obj = args[1].v_obj;
    TVMFFIObjectIncRef(args[1].v_obj);
  }
  return static_cast<int>(args[2].v_int64);
}

}  // extern "C"
