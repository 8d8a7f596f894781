// type_def.cc -- object types: storage, creators, field accessors and registration.
//
// A field setter and a type's creator are plain C function pointers with no
// context argument, so each field and each type this library defines takes
// one entry of a table of functions instantiated from a template (SetterAt<N>,
// CreatorAt<N>) that finds its description by its own N.
#include <array>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "define.h"

namespace tvm_ffi_testing {

namespace {

constexpr size_t kMaxLayouts = 48;
constexpr size_t kMaxSetters = 112;
constexpr uint64_t kStrongAndWeakOne = 1 + (uint64_t(1) << 32);

struct BlankValue {
  int64_t offset;
  Slot slot;
  Value value;
  const char* fresh;  // a constructor giving each blank object its own empty container
};

// How the objects of one type are laid out: every slot its blank value or ownership
// concerns, ancestors' first. Kept for the life of the process.
struct Layout {
  int32_t type_index;
  int32_t total_size;
  std::vector<std::pair<int64_t, Slot>> owned;  // kAny and kObject slots
  std::vector<BlankValue> initial;
};

struct SetterRecord {
  Slot slot;
  SchemaRef schema;
};

Layout* g_layouts[kMaxLayouts];
size_t g_num_layouts = 0;
// Made on first use: registration runs at load, before other globals are initialised.
std::unordered_map<int32_t, const Layout*>& LayoutTable() {
  static auto* table = new std::unordered_map<int32_t, const Layout*>();
  return *table;
}
SetterRecord* g_setters[kMaxSetters];
size_t g_num_setters = 0;

const Layout& LayoutOf(int32_t type_index) {
  auto it = LayoutTable().find(type_index);
  if (it == LayoutTable().end()) {
    Throw("InternalError", "type `" + TypeKeyOf(type_index) + "` is not defined by the testing library");
  }
  return *it->second;
}

void Store(Slot slot, char* address, Value value) {
  const TVMFFIAny& raw = value.raw();
  switch (slot) {
    case Slot::kI64: *reinterpret_cast<int64_t*>(address) = raw.v_int64; break;
    case Slot::kI32: *reinterpret_cast<int32_t*>(address) = static_cast<int32_t>(raw.v_int64); break;
    case Slot::kF64: *reinterpret_cast<double*>(address) = raw.v_float64; break;
    case Slot::kF32: *reinterpret_cast<float*>(address) = static_cast<float>(raw.v_float64); break;
    case Slot::kBool: *reinterpret_cast<uint8_t*>(address) = raw.v_int64 != 0; break;
    case Slot::kDevice: std::memcpy(address, &raw.v_device, sizeof(DLDevice)); break;
    case Slot::kDType: std::memcpy(address, &raw.v_dtype, sizeof(DLDataType)); break;
    case Slot::kAny: {
      TVMFFIAny* slot_any = reinterpret_cast<TVMFFIAny*>(address);
      Value old = Value::Adopt(*slot_any);
      *slot_any = value.Release();
      break;
    }
    case Slot::kObject: {
      void** slot_ptr = reinterpret_cast<void**>(address);
      void* old = *slot_ptr;
      *slot_ptr = value.is_object() ? value.Release().v_obj : nullptr;
      if (old != nullptr) TVMFFIObjectDecRef(old);
      break;
    }
  }
}

void ReleaseOwned(const Layout& layout, char* object) {
  for (const auto& owned : layout.owned) {
    if (owned.second == Slot::kAny) {
      Value::Adopt(*reinterpret_cast<TVMFFIAny*>(object + owned.first));
    } else if (void* child = *reinterpret_cast<void**>(object + owned.first)) {
      TVMFFIObjectDecRef(child);
    }
  }
}

void DeleteObject(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    auto it = LayoutTable().find(Header(self)->type_index);
    if (it != LayoutTable().end()) ReleaseOwned(*it->second, static_cast<char*>(self));
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) std::free(self);
}

char* Allocate(const Layout& layout) {
  char* object = static_cast<char*>(std::calloc(1, static_cast<size_t>(layout.total_size)));
  if (object == nullptr) throw std::bad_alloc();
  TVMFFIObject* header = Header(object);
  header->combined_ref_count = kStrongAndWeakOne;
  header->type_index = layout.type_index;
  header->deleter = DeleteObject;
  return object;
}

Value Adopt(char* object) {
  TVMFFIAny raw = Value::None();
  raw.type_index = Header(object)->type_index;
  raw.v_obj = Header(object);
  return Value::Adopt(raw);
}

Value NewBlank(const Layout& layout) {
  Value object = Adopt(Allocate(layout));
  for (const BlankValue& initial : layout.initial) {
    Value value = initial.fresh != nullptr ? CallGlobal(initial.fresh, {}) : initial.value;
    Store(initial.slot, ObjectBytes(object.handle()) + initial.offset, std::move(value));
  }
  return object;
}

// make_object<Class>(*self): the bytes copied, each owned slot one more reference.
Value ShallowCopy(const Layout& layout, const Value& source) {
  char* object = Allocate(layout);
  std::memcpy(object + sizeof(TVMFFIObject), ObjectBytes(source.handle()) + sizeof(TVMFFIObject),
              static_cast<size_t>(layout.total_size) - sizeof(TVMFFIObject));
  for (const auto& owned : layout.owned) {
    const TVMFFIAny* any = reinterpret_cast<const TVMFFIAny*>(object + owned.first);
    void* child = owned.second == Slot::kAny ? (any->type_index >= kTVMFFIStaticObjectBegin
                                                    ? static_cast<void*>(any->v_obj)
                                                    : nullptr)
                                             : *reinterpret_cast<void**>(object + owned.first);
    if (child != nullptr) TVMFFIObjectIncRef(child);
  }
  return Adopt(object);
}

template <size_t N>
int CreatorAt(TVMFFIObjectHandle* result) {
  return Guard([&] { *result = NewBlank(*g_layouts[N]).Release().v_obj; });
}

template <size_t N>
int SetterAt(void* field, const TVMFFIAny* value) {
  const SetterRecord& record = *g_setters[N];
  return Guard([&] {
    Store(record.slot, static_cast<char*>(field), ConvertOrThrow(*record.schema, *value));
  });
}

template <size_t... N>
constexpr std::array<TVMFFIObjectCreator, sizeof...(N)> Creators(std::index_sequence<N...>) {
  return {&CreatorAt<N>...};
}
template <size_t... N>
constexpr std::array<TVMFFIFieldSetter, sizeof...(N)> Setters(std::index_sequence<N...>) {
  return {&SetterAt<N>...};
}
constexpr auto kCreators = Creators(std::make_index_sequence<kMaxLayouts>{});
constexpr auto kSetters = Setters(std::make_index_sequence<kMaxSetters>{});

template <typename T>
int GetScalar(void* field, TVMFFIAny* result, Value (*make)(T)) {
  return Guard([&] { *result = make(*static_cast<const T*>(field)).Release(); });
}
int GetI64(void* f, TVMFFIAny* r) { return GetScalar<int64_t>(f, r, Value::Int); }
int GetI32(void* f, TVMFFIAny* r) {
  return Guard([&] { *r = Value::Int(*static_cast<const int32_t*>(f)).Release(); });
}
int GetF64(void* f, TVMFFIAny* r) { return GetScalar<double>(f, r, Value::Float); }
int GetF32(void* f, TVMFFIAny* r) {
  return Guard([&] { *r = Value::Float(*static_cast<const float*>(f)).Release(); });
}
int GetBool(void* f, TVMFFIAny* r) {
  return Guard([&] { *r = Value::Bool(*static_cast<const uint8_t*>(f) != 0).Release(); });
}
int GetDevice(void* f, TVMFFIAny* r) { return GetScalar<DLDevice>(f, r, Value::Device); }
int GetDType(void* f, TVMFFIAny* r) { return GetScalar<DLDataType>(f, r, Value::DType); }
int GetAny(void* f, TVMFFIAny* r) {
  return Guard([&] { *r = Value::Copy(*static_cast<const TVMFFIAny*>(f)).Release(); });
}
int GetObject(void* f, TVMFFIAny* r) {
  return Guard([&] { *r = Value::FromHandle(*static_cast<void**>(f)).Release(); });
}

struct SlotTraits {
  int64_t size, alignment;
  TVMFFIFieldGetter getter;
};
SlotTraits TraitsOf(Slot slot) {
  switch (slot) {
    case Slot::kI64: return {8, 8, GetI64};
    case Slot::kI32: return {4, 4, GetI32};
    case Slot::kF64: return {8, 8, GetF64};
    case Slot::kF32: return {4, 4, GetF32};
    case Slot::kBool: return {1, 1, GetBool};
    case Slot::kDevice: return {8, 4, GetDevice};
    case Slot::kDType: return {4, 2, GetDType};
    case Slot::kAny: return {16, 8, GetAny};
    case Slot::kObject: return {8, 8, GetObject};
  }
  return {0, 0, nullptr};
}

TVMFFIByteArray Bytes(const std::string& text) {
  return TVMFFIByteArray{text.empty() ? nullptr : text.data(), text.size()};
}

}  // namespace

// ---------------------------------------------------------------- objects

int32_t DeclareType(const char* key, const char* parent_key, int32_t child_slots) {
  int32_t parent = parent_key != nullptr ? TypeIndexOf(parent_key) : int32_t(kTVMFFIObject);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(parent);
  if (info == nullptr) throw Raised{};
  TVMFFIByteArray name{key, std::strlen(key)};
  int32_t index = TVMFFITypeGetOrAllocIndex(&name, -1, info->type_depth + 1, child_slots, 1, parent);
  if (index < 0) throw Raised{};
  return index;
}

Value NewObject(int32_t type_index) { return NewBlank(LayoutOf(type_index)); }

void StoreSlot(const Value& object, int64_t offset, Slot slot, Value value) {
  Store(slot, ObjectBytes(object.handle()) + offset, std::move(value));
}

Value LoadSlot(const Value& object, int64_t offset, Slot slot) {
  char* address = ObjectBytes(object.handle()) + offset;
  if (slot == Slot::kObject) return Value::FromHandle(*reinterpret_cast<void**>(address));
  return Value::Copy(*reinterpret_cast<const TVMFFIAny*>(address));
}

void DefAttr(int32_t type_index, const char* name, const Value& value) {
  TVMFFIByteArray attr{name, std::strlen(name)};
  Check(TVMFFITypeRegisterAttr(type_index, &attr, &value.raw()));
}

Value LookupAttr(int32_t type_index, const char* name) {
  TVMFFIByteArray attr{name, std::strlen(name)};
  const TVMFFITypeAttrColumn* column = TVMFFIGetTypeAttrColumn(&attr);
  if (column == nullptr) return Value();
  int32_t offset = type_index - column->begin_index;
  if (offset < 0 || offset >= column->size) return Value();
  return Value::Copy(column->data[offset]);
}

// ---------------------------------------------------------------- TypeDef

TypeDef::TypeDef(const char* key, int32_t total_size) : key_(key) {
  type_index_ = TypeIndexOf(key);
  if (g_num_layouts == kMaxLayouts) Throw("InternalError", "testing library: too many types");
  layout_ = static_cast<int>(g_num_layouts);
  Layout* layout = new Layout{type_index_, total_size, {}, {}};
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index_);
  auto parent = LayoutTable().find(info->type_ancestors[info->type_depth - 1]->type_index);
  if (parent != LayoutTable().end()) {  // a subclass of a type of ours holds its storage too
    layout->owned = parent->second->owned;
    layout->initial = parent->second->initial;
  }
  g_layouts[g_num_layouts++] = layout;
  LayoutTable()[type_index_] = layout;
}

TypeDef& TypeDef::AddField(const char* name, int64_t offset, Slot slot, SchemaRef schema,
                           bool writable) {
  FieldRecord field;
  field.name = name;
  field.schema = schema;
  field.slot = slot;
  std::memset(&field.info, 0, sizeof(field.info));
  field.info.offset = offset;
  field.info.flags = writable ? kTVMFFIFieldFlagBitMaskWritable : 0;
  field.info.field_static_type_index = schema->FieldStaticTypeIndex();
  order_.emplace_back(true, fields_.size());
  fields_.push_back(std::move(field));
  // A by-value String, Bytes or container member starts empty, as its C++ default does.
  const char* fresh = nullptr;
  Value blank;
  switch (schema->kind) {
    case Schema::kStr: blank = Value::Str(""); break;
    case Schema::kBytes: blank = Value::Bytes(""); break;
    case Schema::kArray: fresh = "ffi.Array"; break;
    case Schema::kList: fresh = "ffi.List"; break;
    case Schema::kMap: fresh = "ffi.Map"; break;
    case Schema::kDict: fresh = "ffi.Dict"; break;
    default: break;
  }
  Storage(offset, slot, std::move(blank));
  if (fresh != nullptr) g_layouts[layout_]->initial.back().fresh = fresh;
  return *this;
}

TypeDef& TypeDef::Ro(const char* name, int64_t offset, Slot slot, SchemaRef schema) {
  return AddField(name, offset, slot, std::move(schema), false);
}

TypeDef& TypeDef::Rw(const char* name, int64_t offset, Slot slot, SchemaRef schema) {
  return AddField(name, offset, slot, std::move(schema), true);
}

TypeDef& TypeDef::Default(Value value) {
  fields_.back().default_value = std::move(value);
  fields_.back().info.flags |= kTVMFFIFieldFlagBitMaskHasDefault;
  return *this;
}

TypeDef& TypeDef::Flag(int64_t flag) {
  fields_.back().info.flags |= flag;
  return *this;
}

TypeDef& TypeDef::Doc(const char* doc) {
  fields_.back().doc = doc;
  return *this;
}

TypeDef& TypeDef::Meta(Metadata metadata) {
  fields_.back().metadata = std::move(metadata);
  return *this;
}

TypeDef& TypeDef::StaticIndex(int32_t field_static_type_index) {
  fields_.back().info.field_static_type_index = field_static_type_index;
  return *this;
}

TypeDef& TypeDef::Storage(int64_t offset, Slot slot, Value initial) {
  Layout* layout = g_layouts[layout_];
  if (slot == Slot::kAny || slot == Slot::kObject) layout->owned.emplace_back(offset, slot);
  layout->initial.push_back(BlankValue{offset, slot, std::move(initial), nullptr});
  return *this;
}

TypeDef& TypeDef::Initial(int64_t offset, Value value) {
  for (auto& initial : g_layouts[layout_]->initial) {
    if (initial.offset == offset) initial.value = std::move(value);
  }
  return *this;
}

TypeDef& TypeDef::Method(const char* name, SchemaRef result, std::vector<SchemaRef> params,
                         Body body, const char* doc, const Metadata& extra) {
  order_.emplace_back(false, methods_.size());
  methods_.push_back(MethodRecord{name, doc ? doc : "", extra, false, std::move(result),
                                  std::move(params), std::move(body)});
  return *this;
}

TypeDef& TypeDef::StaticMethod(const char* name, SchemaRef result, std::vector<SchemaRef> params,
                               Body body, const char* doc) {
  Method(name, std::move(result), std::move(params), std::move(body), doc);
  methods_.back().is_static = true;
  return *this;
}

TypeDef& TypeDef::Init(std::vector<SchemaRef> params, Body body, const char* doc) {
  explicit_init_ = true;
  return StaticMethod("__ffi_init__", S::Object("ffi.Object"), std::move(params), std::move(body),
                      doc);
}

TypeDef& TypeDef::NoCreator() { creator_ = false; return *this; }
TypeDef& TypeDef::NotCopyable() { copyable_ = false; return *this; }
TypeDef& TypeDef::NoAutoInit() { auto_init_ = false; return *this; }
TypeDef& TypeDef::Final() { final_ = true; return *this; }
TypeDef& TypeDef::StructuralKind(TVMFFISEqHashKind kind) { structural_kind_ = kind; return *this; }

void TypeDef::RegisterField(FieldRecord* field) {
  if (g_num_setters == kMaxSetters) Throw("InternalError", "testing library: too many fields");
  g_setters[g_num_setters] = new SetterRecord{field->slot, field->schema};
  SlotTraits traits = TraitsOf(field->slot);
  field->metadata_json = MetadataJson(field->schema->Json(), field->metadata);
  TVMFFIFieldInfo& info = field->info;
  info.name = Bytes(field->name);
  info.doc = Bytes(field->doc);
  info.metadata = Bytes(field->metadata_json);
  info.size = traits.size;
  info.alignment = traits.alignment;
  info.getter = traits.getter;
  info.setter = reinterpret_cast<void*>(kSetters[g_num_setters++]);
  info.default_value_or_factory = field->default_value.Release();  // kept by the type's record
  Check(TVMFFITypeRegisterField(type_index_, &info));
}

void TypeDef::RegisterMethod(const MethodRecord& method) {
  Value function = TypedFunction(key_ + "." + method.name, method.result, method.params,
                                 method.body);
  std::string metadata = MetadataJson(FunctionSchemaJson(method.result, method.params),
                                      method.metadata);
  TVMFFIMethodInfo info;
  info.name = Bytes(method.name);
  info.doc = Bytes(method.doc);
  info.metadata = Bytes(metadata);
  info.flags = method.is_static ? kTVMFFIFieldFlagBitMaskIsStaticMethod : 0;
  info.method = function.raw();
  Check(TVMFFITypeRegisterMethod(type_index_, &info));
  if (method.name == "__ffi_init__") DefAttr(type_index_, "__ffi_init__", function);
}

void TypeDef::Register() {
  const Layout& layout = *g_layouts[layout_];
  TVMFFITypeMetadata metadata;
  metadata.doc = TVMFFIByteArray{nullptr, 0};
  metadata.creator = creator_ ? kCreators[layout_] : nullptr;
  metadata.total_size = layout.total_size;
  metadata.structural_eq_hash_kind = structural_kind_;
  Check(TVMFFITypeRegisterMetadata(type_index_, &metadata));
  for (const auto& entry : order_) {
    if (entry.first) {
      RegisterField(&fields_[entry.second]);
    } else {
      RegisterMethod(methods_[entry.second]);
    }
  }
  const Layout* own = &layout;
  if (copyable_) {
    DefAttr(type_index_, "__ffi_shallow_copy__",
            TypedFunction(key_ + ".__ffi_shallow_copy__", S::Object("ffi.Object"),
                          {S::Object(key_)},
                          [own](std::vector<Value>& args) { return ShallowCopy(*own, args[0]); }));
  }
  if (creator_) {
    DefAttr(type_index_, "__ffi_new__",
            TypedFunction(key_ + ".__ffi_new__", S::Object("ffi.Object"), {},
                          [own](std::vector<Value>&) { return NewBlank(*own); }));
    Value register_init = FindGlobal("ffi._RegisterFFIInit");
    if (!explicit_init_ && auto_init_ && !register_init.is_none()) {
      Value index = Value::Int(type_index_);
      CallFunction(register_init.handle(), &index.raw(), 1);
    }
  }
  DefAttr(type_index_, "__ffi_type_final__", Value::Bool(final_));
}

}  // namespace tvm_ffi_testing
