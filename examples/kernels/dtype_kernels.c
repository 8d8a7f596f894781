/*
 * dtype_kernels.c -- one kernel for several dtypes and any strides: float32,
 * float16 and int32 tensors, compact or not (transposed, sliced with a step,
 * reversed), from NumPy or torch. Plain C99 against the TVM FFI C headers alone.
 *
 *   total(x)                 the sum of x's elements: a float (an int for int32)
 *   scale_into(x, out, k)    out = x * k, elementwise; out has x's shape and dtype
 *
 * A kernel that takes non-compact tensors must honour `strides` (in elements,
 * possibly negative; NULL means compact row-major) and `byte_offset`; one that
 * takes several dtypes dispatches on `dtype` once, outside the loop.
 */
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#define MAX_DIMS 8

static int fail(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

/* The supported dtypes, one switch away from their loops. */
typedef enum { F32, F16, I32 } Kind;

static int kind_of(const DLTensor* t, const char* name, Kind* kind) {
  char message[96];
  if (t->dtype.lanes == 1 && t->dtype.code == kDLFloat && t->dtype.bits == 32) {
    *kind = F32;
  } else if (t->dtype.lanes == 1 && t->dtype.code == kDLFloat && t->dtype.bits == 16) {
    *kind = F16;
  } else if (t->dtype.lanes == 1 && t->dtype.code == kDLInt && t->dtype.bits == 32) {
    *kind = I32;
  } else {
    snprintf(message, sizeof(message), "%s must be float32, float16 or int32", name);
    return fail("TypeError", message);
  }
  return 0;
}

/* Borrows argument i's DLTensor (a Tensor object or a bare DLTensor*), on the CPU. */
static int arg_tensor(const TVMFFIAny* args, int i, const char* name, DLTensor** out) {
  char message[96];
  DLTensor* t;
  if (args[i].type_index == kTVMFFITensor) {
    t = (DLTensor*)((char*)args[i].v_obj + sizeof(TVMFFIObject)); /* after the header */
  } else if (args[i].type_index == kTVMFFIDLTensorPtr) {
    t = (DLTensor*)args[i].v_ptr;
  } else {
    snprintf(message, sizeof(message), "%s must be a tensor, got type index %d", name,
             (int)args[i].type_index);
    return fail("TypeError", message);
  }
  if (t->device.device_type != kDLCPU) {
    snprintf(message, sizeof(message), "%s must be on the CPU", name);
    return fail("ValueError", message);
  }
  if (t->ndim < 0 || t->ndim > MAX_DIMS) {
    snprintf(message, sizeof(message), "%s has %d dimensions; at most %d", name, (int)t->ndim,
             MAX_DIMS);
    return fail("ValueError", message);
  }
  *out = t;
  return 0;
}

/*
 * Walks a tensor's elements in row-major order, whatever its strides: `index` counts
 * like an odometer, `offset` (in elements) follows it, adding a dimension's stride
 * on each step and taking back the whole row on each wrap.
 */
typedef struct {
  const DLTensor* t;
  int64_t index[MAX_DIMS];
  int64_t strides[MAX_DIMS];
  int64_t offset;
} Walk;

static void walk_start(Walk* w, const DLTensor* t) {
  int32_t d;
  int64_t compact = 1;
  w->t = t;
  w->offset = 0;
  for (d = t->ndim - 1; d >= 0; --d) {
    w->index[d] = 0;
    w->strides[d] = t->strides != NULL ? t->strides[d] : compact;
    compact *= t->shape[d];
  }
}

static void walk_next(Walk* w) {
  int32_t d;
  for (d = w->t->ndim - 1; d >= 0; --d) {
    w->offset += w->strides[d];
    if (++w->index[d] < w->t->shape[d]) return;
    w->offset -= w->strides[d] * w->t->shape[d];
    w->index[d] = 0;
  }
}

static char* element(const Walk* w, size_t size) {
  return (char*)w->t->data + w->t->byte_offset + w->offset * (int64_t)size;
}

static int64_t numel(const DLTensor* t) {
  int64_t count = 1;
  int32_t d;
  for (d = 0; d < t->ndim; ++d) count *= t->shape[d];
  return count;
}

/* IEEE half precision <-> float: C99 has no half type, so the bits are converted here. */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits;
  float f;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13); /* inf, nan */
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13); /* rebias 15 -> 127 */
  } else {
    f = (float)mantissa * 5.9604644775390625e-8f; /* zero or subnormal: mantissa * 2^-24 */
    return sign ? -f : f;
  }
  memcpy(&f, &bits, sizeof(f));
  return f;
}

/* Rounds to the nearest half, ties to even, as NumPy and torch do. */
static uint16_t float_to_half(float f) {
  uint32_t bits, sign, mantissa, half, rest, shift, middle;
  int32_t exponent;
  memcpy(&bits, &f, sizeof(bits));
  sign = (bits >> 16) & 0x8000u;
  mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xffu) == 0xffu) return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  exponent = (int32_t)((bits >> 23) & 0xffu) - 112; /* rebias 127 -> 15 */
  if (exponent >= 0x1f) return (uint16_t)(sign | 0x7c00u); /* too large: inf */
  if (exponent <= 0) {                                     /* a subnormal half, or zero */
    if (exponent < -10) return (uint16_t)sign;
    mantissa |= 0x800000u;
    shift = (uint32_t)(14 - exponent);
    half = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1);
    middle = 1u << (shift - 1);
  } else {
    half = ((uint32_t)exponent << 10) | (mantissa >> 13);
    rest = mantissa & 0x1fffu;
    middle = 0x1000u;
  }
  if (rest > middle || (rest == middle && (half & 1u))) ++half; /* a carry may reach inf: right */
  return (uint16_t)(sign | half);
}

static void set_float(TVMFFIAny* result, double value) {
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = value;
}

/* total(x): one loop per dtype, each walking x's strides. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_total(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  DLTensor* x;
  Kind kind;
  Walk w;
  int64_t k, n, int_sum = 0;
  double sum = 0.0;
  (void)self;
  if (num_args != 1) return fail("TypeError", "total(x) takes 1 argument");
  if (arg_tensor(args, 0, "x", &x) || kind_of(x, "x", &kind)) return -1;
  n = numel(x);
  walk_start(&w, x);
  for (k = 0; k < n; ++k, walk_next(&w)) {
    switch (kind) {
      case F32: sum += *(const float*)element(&w, 4); break;
      case F16: sum += half_to_float(*(const uint16_t*)element(&w, 2)); break;
      case I32: int_sum += *(const int32_t*)element(&w, 4); break;
    }
  }
  if (kind == I32) {
    result->type_index = kTVMFFIInt;
    result->zero_padding = 0;
    result->v_int64 = int_sum;
  } else {
    set_float(result, sum);
  }
  return 0;
}

/* scale_into(x, out, k): out = x * k; an int32 x takes an int k (it wraps as NumPy's does). */
TVM_FFI_DLL_EXPORT int __tvm_ffi_scale_into(void* self, const TVMFFIAny* args, int32_t num_args,
                                            TVMFFIAny* result) {
  DLTensor *x, *out;
  Kind kind, out_kind;
  Walk from, to;
  int64_t k, n, int_factor = 0;
  double factor;
  int32_t d;
  (void)self;
  if (num_args != 3) return fail("TypeError", "scale_into(x, out, k) takes 3 arguments");
  if (arg_tensor(args, 0, "x", &x) || arg_tensor(args, 1, "out", &out) ||
      kind_of(x, "x", &kind) || kind_of(out, "out", &out_kind)) {
    return -1;
  }
  if (out_kind != kind) return fail("TypeError", "out must have x's dtype");
  if (out->ndim != x->ndim) return fail("ValueError", "out must have the shape of x");
  for (d = 0; d < x->ndim; ++d) {
    if (out->shape[d] != x->shape[d]) return fail("ValueError", "out must have the shape of x");
  }
  if (args[2].type_index == kTVMFFIInt || args[2].type_index == kTVMFFIBool) {
    int_factor = args[2].v_int64;
    factor = (double)int_factor;
  } else if (args[2].type_index == kTVMFFIFloat && kind != I32) {
    factor = args[2].v_float64;
  } else {
    return fail("TypeError", kind == I32 ? "k must be an int for an int32 tensor"
                                         : "k must be a float");
  }
  n = numel(x);
  walk_start(&from, x);
  walk_start(&to, out);
  for (k = 0; k < n; ++k, walk_next(&from), walk_next(&to)) {
    switch (kind) {
      case F32:
        *(float*)element(&to, 4) = *(const float*)element(&from, 4) * (float)factor;
        break;
      case F16:
        *(uint16_t*)element(&to, 2) =
            float_to_half(half_to_float(*(const uint16_t*)element(&from, 2)) * (float)factor);
        break;
      case I32:
        *(int32_t*)element(&to, 4) =
            (int32_t)(uint32_t)((uint64_t)(int64_t)*(const int32_t*)element(&from, 4) *
                                (uint64_t)int_factor);
        break;
    }
  }
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
