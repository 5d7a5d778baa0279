// The signatures help() and the type stub show: pybind11 describes every
// Eigen argument or result as `typing.Annotated[NDArray[float64], "[m, n]"]`,
// whose m and n are its own placeholders, not the library's (n is the state
// size here; shapes such as (T, n, n) are in each docstring). This last pass
// over the module leaves the array type and drops the placeholder shape.
#include <Python.h>

#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>

#include "common.hpp"

namespace directable::py_bind {

namespace {

std::string tidy(const std::string& doc) {
  static const std::regex result(R"re(typing\.Annotated\[numpy\.typing\.NDArray\[numpy\.(\w+)\], "\[[^\]"]*\]"(, "flags\.\w+")*\])re");
  static const std::regex argument(R"re(typing\.Annotated\[numpy\.typing\.ArrayLike, numpy\.(\w+), "\[[^\]"]*\]"(, "flags\.\w+")*\])re");
  return std::regex_replace(std::regex_replace(doc, result, "numpy.typing.NDArray[numpy.$1]"), argument,
                            "numpy.typing.ArrayLike");
}

void tidy_function(PyObject* f) {
  if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
  if (!PyCFunction_Check(f)) return;
  PyMethodDef* def = reinterpret_cast<PyCFunctionObject*>(f)->m_ml;
  if (!def || !def->ml_doc) return;
  const std::string doc(def->ml_doc), tidied = tidy(doc);
  if (tidied == doc) return;
  // pybind11 owns ml_doc as a malloc'ed string and frees it the same way.
  char* copy = static_cast<char*>(std::malloc(tidied.size() + 1));
  if (!copy) return;
  std::memcpy(copy, tidied.c_str(), tidied.size() + 1);
  std::free(const_cast<char*>(def->ml_doc));
  def->ml_doc = copy;
}

void tidy_namespace(py::handle owner) {
  const py::dict members = owner.attr("__dict__");
  const py::object builtins = py::module_::import("builtins");
  for (auto item : members) {
    py::handle v = item.second;
    if (py::isinstance(v, builtins.attr("staticmethod")) || py::isinstance(v, builtins.attr("classmethod"))) {
      tidy_function(v.attr("__func__").ptr());
    } else if (py::isinstance(v, builtins.attr("property"))) {
      for (const char* part : {"fget", "fset"})
        if (!v.attr(part).is_none()) tidy_function(v.attr(part).ptr());
    } else {
      tidy_function(v.ptr());
    }
  }
}

}  // namespace

void tidy_signatures(py::module_& m) {
  const py::object type_type = py::module_::import("builtins").attr("type");
  tidy_namespace(m);
  for (auto item : m.attr("__dict__").cast<py::dict>())
    if (py::isinstance(item.second, type_type)) tidy_namespace(item.second);
}

}  // namespace directable::py_bind
