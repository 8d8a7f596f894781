// The limit rows' shapes bound with pybind11: the common C++/Python binding.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

PYBIND11_MODULE(limit_pybind11, m) {
  m.def("nop", []() {});
  m.def("add_int", [](int64_t a, int64_t b) { return a + b; });
  m.def("mul_float", [](double a, double b) { return a * b; });
  m.def("echo_str", [](std::string s) { return s; });
}
