// The limit rows' shapes bound with nanobind: what the fastest C++/Python binding costs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

namespace nb = nanobind;

NB_MODULE(limit_nanobind, m) {
  m.def("nop", []() {});
  m.def("add_int", [](int64_t a, int64_t b) { return a + b; });
  m.def("mul_float", [](double a, double b) { return a * b; });
  m.def("echo_str", [](std::string s) { return s; });
  // The same with the GIL released around the C++ call, as a TVM FFI call does by default.
  using released = nb::call_guard<nb::gil_scoped_release>;
  m.def("nop_released", []() {}, released());
  m.def("add_int_released", [](int64_t a, int64_t b) { return a + b; }, released());
  m.def("mul_float_released", [](double a, double b) { return a * b; }, released());
  m.def("echo_str_released", [](std::string s) { return s; }, released());
}
