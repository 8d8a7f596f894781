#pragma once

#include <tvm/ffi/tvm_ffi.h>

namespace pyk {

struct BaseObj;

struct PointObj;

}  // namespace pyk

template <>
inline constexpr bool tvm::ffi::is_object_subclass_v<::pyk::BaseObj> = true;
template <>
inline constexpr bool tvm::ffi::is_object_subclass_v<::pyk::PointObj> = true;

static_assert(sizeof(::tvm::ffi::Object) == 24);
static_assert(alignof(::tvm::ffi::Object) == 8);

#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#elif defined(_MSC_VER)
#pragma warning(push)
#pragma warning(disable : 4749)
#endif

namespace pyk {

struct alignas(8) BaseObj : public ::tvm::ffi::Object {
  TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP("pyk.Base", 1);

  ::tvm::ffi::String tag;  // offset=24, size=16, align=8
  bool flag;  // offset=40, size=1, align=1
};

static_assert(sizeof(BaseObj) == 48);
static_assert(alignof(BaseObj) == 8);
static_assert(sizeof(decltype(BaseObj::tag)) == 16);
static_assert(alignof(decltype(BaseObj::tag)) == 8);
static_assert(offsetof(BaseObj, tag) == 24);
static_assert(sizeof(decltype(BaseObj::flag)) == 1);
static_assert(alignof(decltype(BaseObj::flag)) == 1);
static_assert(offsetof(BaseObj, flag) == 40);

struct alignas(8) PointObj : public ::pyk::BaseObj {
  TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP("pyk.Point", 2);

  int64_t x;  // offset=48, size=8, align=8
  double y;  // offset=56, size=8, align=8
  ::tvm::ffi::List<int64_t> items;  // offset=64, size=8, align=8
  ::tvm::ffi::Any parent;  // offset=72, size=16, align=8
};

static_assert(sizeof(PointObj) == 88);
static_assert(alignof(PointObj) == 8);
static_assert(sizeof(decltype(PointObj::x)) == 8);
static_assert(alignof(decltype(PointObj::x)) == 8);
static_assert(offsetof(PointObj, x) == 48);
static_assert(sizeof(decltype(PointObj::y)) == 8);
static_assert(alignof(decltype(PointObj::y)) == 8);
static_assert(offsetof(PointObj, y) == 56);
static_assert(sizeof(decltype(PointObj::items)) == 8);
static_assert(alignof(decltype(PointObj::items)) == 8);
static_assert(offsetof(PointObj, items) == 64);
static_assert(sizeof(decltype(PointObj::parent)) == 16);
static_assert(alignof(decltype(PointObj::parent)) == 8);
static_assert(offsetof(PointObj, parent) == 72);

}  // namespace pyk

#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic pop
#elif defined(_MSC_VER)
#pragma warning(pop)
#endif
