/*
 * native_frames.h -- named kernel frames of the current C stack (native_frames.c).
 */
#ifndef TVM_FFI_SRC_NATIVE_FRAMES_H_
#define TVM_FFI_SRC_NATIVE_FRAMES_H_

#include <stddef.h>

/*
 * Writes to out (NUL-terminated, at most capacity bytes) the backtrace lines of the kernel
 * frames of this thread's stack, innermost first: found past python_runs stretches of
 * interpreter frames and the bridges', ending at the next frame of the interpreter or of a
 * bridge; the first skip_kernel_frames of them left out. Returns the length written.
 */
size_t tvm_ffi_native_kernel_frames(char* out, size_t capacity, int python_runs,
                                    int skip_kernel_frames);

#endif /* TVM_FFI_SRC_NATIVE_FRAMES_H_ */
