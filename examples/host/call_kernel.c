/*
 * call_kernel.c -- a C program that calls a kernel library through the TVM FFI
 * C API alone, no Python (spec/15-first-kernel.md, "A C host program"):
 *
 *   call_kernel path/to/libfirst_kernel.so
 *
 * loads the library with dlopen, wraps its exported scale_into in a Function,
 * publishes that as a global function, looks the global up by name and calls
 * it with TVMFFIFunctionCall on two float arrays it owns; then shows a failed
 * call's error. Plain C99 against the TVM FFI C headers alone.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* Prints the error a failed call left in this thread's raised-error slot. */
static void print_raised(const char* what) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorCell* cell;
  TVMFFIErrorMoveFromRaised(&error); /* now ours: one strong reference */
  if (error == NULL) {
    printf("%s failed, no error raised\n", what);
    return;
  }
  /* The Error's cell follows the 24-byte object header (C++ has TVMFFIErrorGetCellPtr). */
  cell = (TVMFFIErrorCell*)((char*)error + sizeof(TVMFFIObject));
  printf("%s failed: %.*s: %.*s\n", what, (int)cell->kind.size, cell->kind.data,
         (int)cell->message.size, cell->message.data);
  TVMFFIObjectDecRef(error);
}

/* A TVMFFIAny holding a bare DLTensor*: the callee borrows the struct we own. */
static TVMFFIAny tensor_arg(DLTensor* tensor) {
  TVMFFIAny any;
  memset(&any, 0, sizeof(any));
  any.type_index = kTVMFFIDLTensorPtr;
  any.v_ptr = tensor;
  return any;
}

int main(int argc, char** argv) {
  const char* global_name = "first_kernel.scale_into";
  TVMFFIByteArray name = {global_name, strlen(global_name)};
  float x_data[4] = {0.0f, 1.0f, 2.0f, 3.0f}, out_data[4] = {0};
  int64_t shape[1] = {4};
  DLTensor x, out;
  TVMFFIAny args[3], result;
  TVMFFISafeCallType scale_into;
  TVMFFIObjectHandle made = NULL, found = NULL;
  void* library;
  int k, status;

  if (argc != 2) {
    fprintf(stderr, "usage: %s path/to/libfirst_kernel.so\n", argv[0]);
    return 2;
  }
  /* 1. Load the library; its TVMFFI* imports bind to this process's libtvm_ffi.so. */
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  /* 2. Its exported function is a safe-call function named __tvm_ffi_<name>. */
  *(void**)&scale_into = dlsym(library, "__tvm_ffi_scale_into");
  if (scale_into == NULL) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  /* 3. A Function object around it, published as a global, then looked up by name. */
  if (TVMFFIFunctionCreate(NULL, scale_into, NULL, &made) != 0 ||
      TVMFFIFunctionSetGlobal(&name, made, 0) != 0 ||
      TVMFFIFunctionGetGlobal(&name, &found) != 0 || found == NULL) {
    print_raised("publishing and looking up the global");
    return 1;
  }
  TVMFFIObjectDecRef(made); /* the global table and `found` keep it alive */

  /* 4. The arguments: two DLTensor structs over our arrays, and a float. */
  memset(&x, 0, sizeof(x));
  x.data = x_data;
  x.device.device_type = kDLCPU;
  x.ndim = 1;
  x.dtype.code = kDLFloat;
  x.dtype.bits = 32;
  x.dtype.lanes = 1;
  x.shape = shape;
  out = x;
  out.data = out_data;
  args[0] = tensor_arg(&x);
  args[1] = tensor_arg(&out);
  memset(&args[2], 0, sizeof(args[2]));
  args[2].type_index = kTVMFFIFloat;
  args[2].v_float64 = 2.5;

  /* 5. The call. The result slot is ours to release (a None holds nothing). */
  memset(&result, 0, sizeof(result));
  status = TVMFFIFunctionCall(found, args, 3, &result);
  printf("%s(x, out, 2.5): status %d, result type index %d\nout =", global_name, status,
         (int)result.type_index);
  for (k = 0; k < 4; ++k) printf(" %g", out_data[k]);
  printf("\n");

  /* 6. A call the kernel refuses: status -1 and an Error in the raised-error slot. */
  status = TVMFFIFunctionCall(found, args, 2, &result);
  if (status != 0) print_raised("scale_into(x, out)");

  TVMFFIObjectDecRef(found);
  return 0;
}
