#pragma once
// repr and pickling of the core objects, built only from what each object
// already exposes to Python (its constructor's arguments as properties, its
// stored arrays): no numerics and no validation here; unpickling calls the
// class's own constructor, so a pickled object is checked like a new one.
#include <string>
#include <vector>

#include "common.hpp"

namespace directable::py_bind {

//! "(240, 8, 16) float64" for an array, repr() of anything else.
std::string repr_value(py::handle value);

//! "Name(a=..., b=...)" from the attributes `attrs` of `self` (an attribute
//! that raises is left out).
std::string repr_from(py::handle self, const std::vector<std::string>& attrs);

//! cls.__repr__ = repr_from(self, attrs). With no attrs: every property of
//! the class whose value is a number, a bool, a string, an enum or None.
void add_repr(py::handle cls, std::vector<std::string> attrs = {});

//! cls.__reduce__ for pickle, copy and deepcopy: the object is rebuilt as
//! cls(*(self.<a> for a in args)); then each attribute of `state` (those
//! with a setter, e.g. a per-step index) is set and the instance __dict__,
//! if the class has one, restored.
void add_reduce(py::handle cls, std::vector<std::string> args, std::vector<std::string> state = {});

}  // namespace directable::py_bind
