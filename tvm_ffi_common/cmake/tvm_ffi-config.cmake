# find_package(tvm_ffi) for this project: the targets a TVM FFI kernel library links to.
#
#   tvm_ffi::header  the C headers (tvm/ffi/c_api.h, tvm/ffi/extra/c_env_api.h,
#                    dlpack/dlpack.h) and C++17, nothing to link
#   tvm_ffi::shared  libtvm_ffi.so, with those headers
#
# This file lives in tvm_ffi_common/cmake (`python -m tvm_ffi_fast.config --cmakedir`,
# or `tvm_ffi.config` under TVM_FFI_IMPL); the library and headers are found next
# to it: tvm_ffi_common/lib and tvm_ffi_common/include in an installed wheel,
# c_api/include in a source checkout.

get_filename_component(_tvm_ffi_package_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

find_path(
  tvm_ffi_INCLUDE_DIR tvm/ffi/c_api.h
  PATHS "${_tvm_ffi_package_dir}/include" "${_tvm_ffi_package_dir}/../c_api/include"
  NO_DEFAULT_PATH
)
set(tvm_ffi_DLPACK_INCLUDE_DIR "${tvm_ffi_INCLUDE_DIR}")
set(tvm_ffi_LIB_FILES "${_tvm_ffi_package_dir}/lib/libtvm_ffi.so")

if (NOT tvm_ffi_INCLUDE_DIR OR NOT EXISTS "${tvm_ffi_LIB_FILES}")
  set(tvm_ffi_FOUND FALSE)
  set(tvm_ffi_NOT_FOUND_MESSAGE
      "the TVM FFI headers or ${tvm_ffi_LIB_FILES} are missing: build with `pip install .`")
  return()
endif ()

message(STATUS "Found TVM FFI library ${tvm_ffi_LIB_FILES}")

if (NOT TARGET tvm_ffi::header)
  add_library(tvm_ffi::header INTERFACE IMPORTED)
  target_compile_features(tvm_ffi::header INTERFACE cxx_std_17)
  target_include_directories(tvm_ffi::header INTERFACE "${tvm_ffi_INCLUDE_DIR}")
endif ()

if (NOT TARGET tvm_ffi::shared)
  add_library(tvm_ffi::shared SHARED IMPORTED)
  target_compile_features(tvm_ffi::shared INTERFACE cxx_std_17)
  set_target_properties(
    tvm_ffi::shared PROPERTIES IMPORTED_LOCATION "${tvm_ffi_LIB_FILES}"
                               INTERFACE_INCLUDE_DIRECTORIES "${tvm_ffi_INCLUDE_DIR}"
  )
endif ()
