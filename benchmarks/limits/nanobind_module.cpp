// The limit rows' shapes bound with nanobind: what the fastest C++/Python binding costs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

NB_MODULE(limit_nanobind, m) {
  m.def("nop", []() {});
  m.def("add_int", [](int64_t a, int64_t b) { return a + b; });
  m.def("mul_float", [](double a, double b) { return a * b; });
  m.def("echo_str", [](std::string s) { return s; });
}
