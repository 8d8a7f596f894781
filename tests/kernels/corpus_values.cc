// Scalar and string-like values crossing the boundary in both directions:
// int64 at its bounds, integers beyond int64 (BigInt), doubles with their
// special values, bools, None, small and long strings (UTF-8), bytes with
// embedded NULs, dtypes and devices.
#include <tvm/ffi/any.h>
#include <tvm/ffi/big_int.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::BigInt;
using tvm::ffi::Bytes;
using tvm::ffi::String;

// ---- generic -------------------------------------------------------------

// Returns its argument unchanged: the round trip Python -> Any -> Python.
Any Echo(Any value) { return value; }

// ---- integers ------------------------------------------------------------

int64_t Int64Max() { return std::numeric_limits<int64_t>::max(); }
int64_t Int64Min() { return std::numeric_limits<int64_t>::min(); }

// Wrapping arithmetic done in unsigned space so that overflow is defined.
int64_t IntAddWrapping(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Decimal text of an int64 as C++ sees it.
String IntToText(int64_t value) { return String(std::to_string(value)); }

// Integers that may exceed int64 travel as BigInt.
BigInt BigIntEcho(BigInt value) { return value; }
BigInt BigIntAdd(BigInt a, BigInt b) { return a + b; }
BigInt BigIntMul(BigInt a, BigInt b) { return a * b; }
// 2 ** exponent built in C++: crosses to Python as an int of any size.
BigInt BigIntPow2(int64_t exponent) {
  BigInt result(1);
  for (int64_t i = 0; i < exponent; ++i) result *= BigInt(2);
  return result;
}

// ---- floats --------------------------------------------------------------

double FloatEcho(double value) { return value; }
double FloatNaN() { return std::numeric_limits<double>::quiet_NaN(); }
double FloatInf() { return std::numeric_limits<double>::infinity(); }
double FloatNegZero() { return -0.0; }
double FloatHalf(double value) { return value / 2.0; }
// The IEEE-754 bits of a double argument: proves -0.0 and NaN arrive intact.
int64_t FloatBits(double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
bool FloatIsNaN(double value) { return std::isnan(value); }
bool FloatSignBit(double value) { return std::signbit(value); }

// ---- bools and None ------------------------------------------------------

bool BoolNot(bool value) { return !value; }
bool BoolTrue() { return true; }
void ReturnsVoid() {}
Any ReturnsNullAny() { return Any(nullptr); }
bool IsNone(Any value) { return value == nullptr; }

// ---- strings -------------------------------------------------------------

// Length in UTF-8 bytes (proves the encoding Python used).
int64_t StrByteLen(String value) { return static_cast<int64_t>(value.size()); }
String StrConcat(String a, String b) { return String(std::string(a) + std::string(b)); }
String StrRepeat(String value, int64_t times) {
  std::string out;
  for (int64_t i = 0; i < times; ++i) out += std::string(value);
  return String(out);
}
// The UTF-8 bytes of a string, as Bytes.
Bytes StrUtf8(String value) { return Bytes(value.data(), value.size()); }
// A string of exactly n ASCII letters: n <= 7 is a small string, longer an object.
String StrOfLen(int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<char>('a' + i % 26));
  return String(out);
}
// Non-ASCII text built in C++ from explicit UTF-8 bytes.
String StrNonAscii() { return String("gr\xC3\xBC\xC3\x9F \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x8E\x89"); }
// A string containing an embedded NUL.
String StrWithNul() { return String(std::string("ab\0cd", 5)); }

// ---- bytes ---------------------------------------------------------------

int64_t BytesLen(Bytes value) { return static_cast<int64_t>(value.size()); }
// Lower-case hex of the bytes, so NULs and high bytes are visible as text.
String BytesHex(Bytes value) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(value.data()[i]);
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return String(out);
}
Bytes BytesWithNul() { return Bytes(std::string("\0x\0y\xff", 5)); }
// n bytes counting 0, 1, 2, ... (mod 256): short and long Bytes.
Bytes BytesOfLen(int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<char>(i & 0xff));
  return Bytes(out);
}

// ---- dtype and device ----------------------------------------------------

String DTypeToText(DLDataType dtype) { return tvm::ffi::DLDataTypeToString(dtype); }
Array<int64_t> DTypeFields(DLDataType dtype) {
  return Array<int64_t>({dtype.code, dtype.bits, dtype.lanes});
}
DLDataType DTypeMake(int64_t code, int64_t bits, int64_t lanes) {
  DLDataType dtype;
  dtype.code = static_cast<uint8_t>(code);
  dtype.bits = static_cast<uint8_t>(bits);
  dtype.lanes = static_cast<uint16_t>(lanes);
  return dtype;
}
Array<int64_t> DeviceFields(DLDevice device) {
  return Array<int64_t>({static_cast<int64_t>(device.device_type), device.device_id});
}
DLDevice DeviceMake(int64_t type, int64_t id) {
  DLDevice device;
  device.device_type = static_cast<DLDeviceType>(type);
  device.device_id = static_cast<int32_t>(id);
  return device;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo, Echo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(int64_max, Int64Max);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(int64_min, Int64Min);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(int_add_wrapping, IntAddWrapping);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(int_to_text, IntToText);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bigint_echo, BigIntEcho);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bigint_add, BigIntAdd);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bigint_mul, BigIntMul);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bigint_pow2, BigIntPow2);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_echo, FloatEcho);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_nan, FloatNaN);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_inf, FloatInf);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_neg_zero, FloatNegZero);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_half, FloatHalf);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_bits, FloatBits);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_is_nan, FloatIsNaN);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(float_sign_bit, FloatSignBit);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bool_not, BoolNot);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bool_true, BoolTrue);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(returns_void, ReturnsVoid);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(returns_null_any, ReturnsNullAny);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(is_none, IsNone);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_byte_len, StrByteLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_concat, StrConcat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_repeat, StrRepeat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_utf8, StrUtf8);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_of_len, StrOfLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_non_ascii, StrNonAscii);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_with_nul, StrWithNul);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bytes_len, BytesLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bytes_hex, BytesHex);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bytes_with_nul, BytesWithNul);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bytes_of_len, BytesOfLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_to_text, DTypeToText);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_fields, DTypeFields);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_make, DTypeMake);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_fields, DeviceFields);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_make, DeviceMake);
