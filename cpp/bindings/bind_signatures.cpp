// Last passes over every function of the module (methods, properties'
// accessors, static and class methods).
//
// The signatures help() and the type stub show: pybind11 describes every
// Eigen argument or result as `typing.Annotated[NDArray[float64], "[m, n]"]`,
// whose m and n are its own placeholders, not the library's (n is the state
// size here; shapes such as (T, n, n) are in each docstring). The pass
// leaves the array type and drops the placeholder shape.
//
// `self` must never be None: pybind11 refuses None for an argument only
// where an argument record says so, and a method declared without py::arg
// annotations has no records, so `Class.method(None)` would hand the C++
// method a null object (a crash). The pass gives each such method the
// records pybind11 gives annotated ones: `self` refuses None (TypeError),
// the other arguments stay as they were.
//
// Array arguments refused by their caster (None, complex, object, str) are
// named: each function's dispatch is wrapped once so that the caster's
// TypeError says which argument it refused.
#include <Python.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>

#include "common.hpp"

namespace directable::py_bind {

namespace {

// Reads doc from `at` as a tiny grammar; each step advances `at` only on a
// match. (No std::regex: it costs seconds of compile time, and at import it
// uses the C++ locale, which crashed where a toolchain linked libstdc++
// statically beside numpy's dynamically loaded one.)
struct Reader {
  const std::string& doc;
  std::size_t at;
  bool literal(const char* text) {
    const std::size_t n = std::strlen(text);
    if (doc.compare(at, n, text) != 0) return false;
    at += n;
    return true;
  }
  bool word(std::string* out = nullptr) {  // [A-Za-z0-9_]+
    std::size_t end = at;
    while (end < doc.size() && (std::isalnum(static_cast<unsigned char>(doc[end])) || doc[end] == '_')) ++end;
    if (end == at) return false;
    if (out) *out = doc.substr(at, end - at);
    at = end;
    return true;
  }
  bool placeholder_shape() {  // "[m, n]": no ] or " inside
    if (!literal("\"[")) return false;
    while (at < doc.size() && doc[at] != ']' && doc[at] != '"') ++at;
    return literal("]\"");
  }
  bool flags_and_close() {  // (, "flags.word")* ]
    for (;;) {
      const std::size_t mark = at;
      if (literal(", \"flags.") && word() && literal("\"")) continue;
      at = mark;
      return literal("]");
    }
  }
};

// typing.Annotated[numpy.typing.NDArray[numpy.T], "[m, n]", "flags.x"...] -> numpy.typing.NDArray[numpy.T]
// typing.Annotated[numpy.typing.ArrayLike, numpy.T, "[m, n]", ...]        -> numpy.typing.ArrayLike
std::string tidy(const std::string& doc) {
  static const char kStart[] = "typing.Annotated[numpy.typing.";
  std::string out;
  std::size_t copied = 0;
  for (std::size_t pos = doc.find(kStart); pos != std::string::npos; pos = doc.find(kStart, pos + 1)) {
    Reader r{doc, pos + sizeof(kStart) - 1};
    std::string dtype, replacement;
    if (r.literal("NDArray[numpy.") && r.word(&dtype) && r.literal("], ") && r.placeholder_shape() &&
        r.flags_and_close()) {
      replacement = "numpy.typing.NDArray[numpy." + dtype + "]";
    } else {
      r.at = pos + sizeof(kStart) - 1;
      if (!(r.literal("ArrayLike, numpy.") && r.word() && r.literal(", ") && r.placeholder_shape() &&
            r.flags_and_close()))
        continue;
      replacement = "numpy.typing.ArrayLike";
    }
    out.append(doc, copied, pos - copied);
    out += replacement;
    copied = r.at;
    pos = r.at - 1;
  }
  if (copied == 0) return doc;
  out.append(doc, copied, std::string::npos);
  return out;
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

void refuse_none_self(PyObject* f) {
  if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
  if (!PyCFunction_Check(f)) return;
  PyObject* owner = PyCFunction_GET_SELF(f);
  if (!owner) return;
  // every overload of a pybind11 function
  for (auto* rec = py::detail::function_record_ptr_from_PyObject(owner); rec; rec = rec->next) {
    if (!rec->is_method || rec->is_constructor || rec->has_args || rec->has_kwargs || !rec->args.empty() ||
        rec->nargs == 0)
      continue;
    // pybind11 frees the names of a live function's records with std::free
    char* self = strdup("self");
    if (!self) throw std::bad_alloc();
    rec->args.emplace_back(self, nullptr, py::handle(), /*convert=*/true, /*none=*/false);
    for (std::uint16_t k = 1; k < rec->nargs; ++k)
      rec->args.emplace_back(nullptr, nullptr, py::handle(), /*convert=*/true, /*none=*/true);
  }
}

using Impl = py::handle (*)(py::detail::function_call&);

//! Each function's own dispatch, by record; filled once at import, read-only after.
std::unordered_map<const py::detail::function_record*, Impl>& original_impls() {
  static std::unordered_map<const py::detail::function_record*, Impl> impls;
  return impls;
}

//! A function's dispatch that names the argument the Array caster refused.
py::handle naming_impl(py::detail::function_call& call) {
  const Impl impl = original_impls().at(&call.func);
  try {
    return impl(call);
  } catch (const ArrayArgumentError& e) {
    for (std::size_t k = 0; k < call.args.size(); ++k) {
      if (call.args[k].ptr() != e.src()) continue;
      const bool named = k < call.func.args.size() && call.func.args[k].name;
      const std::string name = named ? std::string(call.func.args[k].name)
                                     : "argument " + std::to_string(k + 1 - (call.func.is_method ? 1 : 0));
      throw py::type_error(name + " must be a real numeric array, got " + e.received());
    }
    throw;  // inside a container argument: the caster's own message
  }
}

void name_array_arguments(PyObject* f) {
  if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
  if (!PyCFunction_Check(f)) return;
  PyObject* owner = PyCFunction_GET_SELF(f);
  if (!owner) return;
  for (auto* rec = py::detail::function_record_ptr_from_PyObject(owner); rec; rec = rec->next) {
    if (!rec->impl || rec->impl == naming_impl) continue;
    original_impls().emplace(rec, rec->impl);
    rec->impl = naming_impl;
  }
}

//! f(function) for every function in owner's namespace (a module or a class).
template <class F>
void for_each_function(py::handle owner, F&& f) {
  const py::dict members = owner.attr("__dict__");
  const py::object builtins = py::module_::import("builtins");
  for (auto item : members) {
    py::handle v = item.second;
    if (py::isinstance(v, builtins.attr("staticmethod")) || py::isinstance(v, builtins.attr("classmethod"))) {
      f(v.attr("__func__").ptr());
    } else if (py::isinstance(v, builtins.attr("property"))) {
      for (const char* part : {"fget", "fset"})
        if (!v.attr(part).is_none()) f(v.attr(part).ptr());
    } else {
      f(v.ptr());
    }
  }
}

//! f(function) for the module's functions and those of its classes.
template <class F>
void for_each_function_of_module(py::module_& m, F&& f) {
  const py::object type_type = py::module_::import("builtins").attr("type");
  for_each_function(m, f);
  for (auto item : m.attr("__dict__").cast<py::dict>())
    if (py::isinstance(item.second, type_type)) for_each_function(item.second, f);
}

}  // namespace

void finish_functions(py::module_& m) {
  for_each_function_of_module(m, tidy_function);
  for_each_function_of_module(m, refuse_none_self);
  for_each_function_of_module(m, name_array_arguments);
}

}  // namespace directable::py_bind
