#pragma once
// Conversions at the Python boundary (no numerics here). Arrays are taken
// as C-contiguous float64 (NumPy's layout, copied only if the caller's
// array is not already so) and viewed in place; results are NumPy views of
// C++ buffers that keep their owner alive.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <limits>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"

namespace directable::py_bind {

namespace py = pybind11;

//! NumPy's NPY_ARRAY_ALIGNED as an array_t requirement. A buffer unpickled
//! out of band (pickle protocol 5: Dask, Ray, multiprocessing) can start at
//! any byte; reading it through a double* or int64* is undefined behaviour,
//! so NumPy copies such an array (aligned data is still taken in place).
constexpr int aligned = py::detail::npy_api::NPY_ARRAY_ALIGNED_;

//! A C-contiguous, aligned array argument of T, converted from any array-like.
template <class T>
using InputArray = py::array_t<T, py::array::c_style | py::array::forcecast | aligned>;

//! A C-contiguous float64 array argument. Unlike a plain forcecast
//! array_t it refuses complex, string and object data (TypeError) instead
//! of casting them silently; real numeric data is converted (no copy when it
//! already is C-contiguous, aligned float64).
struct Array : InputArray<double> {
  using InputArray<double>::array_t;
};
using OptArray = std::optional<Array>;

//! The Array caster's refusal of an argument (None, complex, object or
//! string data). The caster does not know the argument's name; the module's
//! last pass (finish_functions) finds it among the call's arguments and
//! re-raises the TypeError with it.
class ArrayArgumentError : public py::type_error {
 public:
  ArrayArgumentError(py::handle src, std::string received)
      : py::type_error("expected a real numeric array, got " + received), src_(src.ptr()),
        received_(std::move(received)) {}
  PyObject* src() const { return src_; }  //!< the refused object (borrowed: valid during the call)
  const std::string& received() const { return received_; }

 private:
  PyObject* src_;
  std::string received_;
};

}  // namespace directable::py_bind

namespace pybind11::detail {

//! Integer arguments (counts, sizes, indices, thread numbers) accept only
//! what Python itself treats as an integer (int, NumPy integers: objects
//! with __index__). pybind11's own caster would truncate a NumPy float
//! (np.float32(8.7) -> 8) silently; here it is refused (TypeError).
template <class Int>
struct strict_integer_caster {
  PYBIND11_TYPE_CASTER(Int, const_name("int"));
  bool load(handle src, bool) {
    if (!src || !PyIndex_Check(src.ptr())) return false;
    object index = reinterpret_steal<object>(PyNumber_Index(src.ptr()));
    if (!index) {
      PyErr_Clear();
      return false;
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred()) || v < static_cast<long long>(std::numeric_limits<Int>::min()) ||
        v > static_cast<long long>(std::numeric_limits<Int>::max())) {
      PyErr_Clear();
      return false;
    }
    value = static_cast<Int>(v);
    return true;
  }
  static handle cast(Int src, return_value_policy, handle) { return PyLong_FromLongLong(static_cast<long long>(src)); }
};
template <>
class type_caster<int> : public strict_integer_caster<int> {};
template <>
class type_caster<long> : public strict_integer_caster<long> {};
template <>
class type_caster<long long> : public strict_integer_caster<long long> {};

//! List arguments (index lists, names, per-item numbers): a 0-d NumPy array
//! passes pybind11's sequence check but has no length, and its list caster
//! would then raise "len() of unsized object" naming no argument. Refused
//! here, the call fails with the signature and the argument's name instead.
template <class Vector, class Value>
struct sized_list_caster : list_caster<Vector, Value> {
  bool load(handle src, bool convert) {
    if (src && PySequence_Check(src.ptr()) && PyObject_Length(src.ptr()) < 0) {
      PyErr_Clear();
      return false;
    }
    return list_caster<Vector, Value>::load(src, convert);
  }
};
template <>
class type_caster<std::vector<long>> : public sized_list_caster<std::vector<long>, long> {};
template <>
class type_caster<std::vector<int>> : public sized_list_caster<std::vector<int>, int> {};
template <>
class type_caster<std::vector<double>> : public sized_list_caster<std::vector<double>, double> {};
template <>
class type_caster<std::vector<std::string>> : public sized_list_caster<std::vector<std::string>, std::string> {};

template <>
struct type_caster<directable::py_bind::Array> {
  PYBIND11_TYPE_CASTER(directable::py_bind::Array, const_name("numpy.ndarray[numpy.float64]"));
  bool load(handle src, bool convert) {
    using Base = directable::py_bind::InputArray<double>;
    if (!convert && !Base::check_(src)) return false;
    array a = array::ensure(src);
    if (!a) return false;
    // (the caster does not know the argument's name: finish_functions adds it)
    if (src.is_none()) throw directable::py_bind::ArrayArgumentError(src, "None");
    const char kind = a.dtype().kind();
    if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f')
      throw directable::py_bind::ArrayArgumentError(
          src, "dtype " + std::string(pybind11::str(a.dtype())) + " (" +
                   std::string(pybind11::str(src.get_type().attr("__name__"))) + ")");
    Base b = Base::ensure(a);
    if (!b) return false;
    value = directable::py_bind::Array(std::move(b));
    return true;
  }
  static handle cast(const directable::py_bind::Array& src, return_value_policy, handle) {
    return src.inc_ref();
  }
};
}  // namespace pybind11::detail

namespace directable::py_bind {

//! An array taken from inside another argument (an item of a tuple): the
//! Array caster's refusals and NumPy's conversion errors re-raised with the
//! item's name (the module's argument pass only sees top-level arguments).
inline Array array_item(py::handle h, const std::string& name) {
  try {
    return h.cast<Array>();
  } catch (const ArrayArgumentError& e) {
    throw py::type_error(name + " must be a real numeric array, got " + e.received());
  } catch (const py::cast_error&) {
    throw py::type_error(name + " must be a real numeric array, got " +
                         py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>());
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_ValueError)) throw py::value_error(name + ": " + e.what());
    if (e.matches(PyExc_TypeError)) throw py::type_error(name + ": " + e.what());
    throw;
  }
}

//! A (T, r, c) array is a sequence, an (r, c) array is constant in time.
inline SeqView matrix_seq(const Array& a, const std::string& name) {
  if (a.ndim() == 2) return SeqView::constant(a.data(), a.shape(0), a.shape(1));
  if (a.ndim() == 3) return SeqView(a.data(), a.shape(0), a.shape(1), a.shape(2), false);
  throw std::invalid_argument(name + " must be a 2-D matrix or a 3-D (T, rows, cols) sequence, got a " +
                              std::to_string(a.ndim()) + "-D array");
}
inline SeqView matrix_seq(const OptArray& a, const std::string& name) {
  return a ? matrix_seq(*a, name) : SeqView();
}

//! A (T, d) array of vectors, seen as T matrices of shape (1, d).
inline SeqView vector_seq(const Array& a, const std::string& name) {
  if (a.ndim() != 2)
    throw std::invalid_argument(name + " must be a 2-D (T, dim) array, got a " + std::to_string(a.ndim()) + "-D array");
  return SeqView(a.data(), a.shape(0), 1, a.shape(1), false);
}
inline SeqView vector_seq(const OptArray& a, const std::string& name) { return a ? vector_seq(*a, name) : SeqView(); }

//! "(d0, d1, ...)" of an array argument, for error messages.
inline std::string shape_of(const py::array& a) {
  std::string got = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) got += (d ? ", " : "") + std::to_string(a.shape(d));
  return got + (a.ndim() == 1 ? ",)" : ")");
}

//! The array an `out=` argument names, written in place (nothing copied):
//! a writeable, C-contiguous ndarray of T (`dtype` names T in messages) of
//! `shape`; None: a new array of `shape`. A wrong type or dtype is a
//! TypeError; a strided, read-only or wrongly shaped array a ValueError.
template <class T>
py::array_t<T> out_array(const py::handle& out, const std::string& name, const char* dtype,
                         const std::vector<py::ssize_t>& shape) {
  if (out.is_none()) return py::array_t<T>(shape);
  std::string expected = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) expected += (k ? ", " : "") + std::to_string(shape[k]);
  expected += shape.size() == 1 ? ",)" : ")";
  if (!py::isinstance<py::array_t<T>>(out))
    throw py::type_error(name + " must be a " + dtype + " ndarray " + expected + ", got " +
                         (py::isinstance<py::array>(out)
                              ? std::string(py::str(py::reinterpret_borrow<py::array>(out).dtype())) + " array"
                              : py::str(py::type::handle_of(out).attr("__name__")).cast<std::string>()));
  auto a = py::reinterpret_borrow<py::array_t<T>>(out);
  if (!(a.flags() & py::array::c_style)) throw std::invalid_argument(name + " must be C-contiguous, got a strided view");
  if (!(a.flags() & aligned)) throw std::invalid_argument(name + " must be aligned, got an array at an unaligned address");
  if (!a.writeable()) throw std::invalid_argument(name + " must be writeable, got a read-only array");
  bool same = a.ndim() == py::ssize_t(shape.size());
  for (std::size_t k = 0; same && k < shape.size(); ++k) same = a.shape(k) == shape[k];
  if (!same) throw_shape(name, expected, shape_of(a));
  return a;
}

//! A (n,) vector argument viewed in place; `expected` >= 0 fixes n.
inline Eigen::Map<const Eigen::VectorXd> vector(const Array& a, const std::string& name, Index expected = -1,
                                                 bool finite = false) {
  if (a.ndim() != 1 || (expected >= 0 && a.shape(0) != expected))
    throw_shape(name, expected >= 0 ? "(" + std::to_string(expected) + ",)" : "(n,)", shape_of(a));
  if (finite) check_finite(name, a.data(), a.shape(0));
  return Eigen::Map<const Eigen::VectorXd>(a.data(), a.shape(0));
}

//! An optional (n,) vector: empty when the argument is None.
inline Eigen::VectorXd optional_vector(const OptArray& a, const std::string& name, Index expected = -1) {
  return a ? Eigen::VectorXd(vector(*a, name, expected)) : Eigen::VectorXd();
}

//! An optional (len,) vector where a scalar stands for len equal entries;
//! empty when the argument is None.
inline Eigen::VectorXd broadcast_vector(const OptArray& a, const std::string& name, Index len) {
  if (!a) return Eigen::VectorXd();
  if (a->ndim() == 0) return Eigen::VectorXd::Constant(len, *a->data());
  return Eigen::VectorXd(vector(*a, name, len));
}

//! A (rows, cols) matrix argument viewed in place; a negative rows or cols
//! leaves that dimension free (e.g. (P, 3) points, (N, r) bases), named in
//! messages by row_label / col_label.
inline Eigen::Map<const RowMatrix> rows_view(const Array& a, const std::string& name, Index cols, Index rows = -1,
                                             bool finite = false, const char* row_label = "k",
                                             const char* col_label = "n") {
  if (a.ndim() != 2 || (cols >= 0 && a.shape(1) != cols) || (rows >= 0 && a.shape(0) != rows)) {
    const std::string r = rows >= 0 ? std::to_string(rows) : std::string(row_label);
    const std::string c = cols >= 0 ? std::to_string(cols) : std::string(col_label);
    throw_shape(name, "(" + r + ", " + c + ")", shape_of(a));
  }
  if (finite) check_finite(name, a.data(), a.size());
  return Eigen::Map<const RowMatrix>(a.data(), a.shape(0), a.shape(1));
}

//! (count, dim) points x0, y0, ... checked finite and viewed as one flat
//! vector of count * dim entries (the layout of the core's point states).
inline Eigen::Map<const Eigen::VectorXd> flat_points(const Array& a, const std::string& name, Index dim,
                                                     Index count = -1) {
  auto P = rows_view(a, name, dim, count, true);
  return Eigen::Map<const Eigen::VectorXd>(P.data(), P.size());
}

//! A (n,) vector constant in time or a (T, n) sequence of vectors, seen as
//! matrices of shape (1, n).
inline SeqView vector_or_sequence(const Array& a, const std::string& name) {
  if (a.ndim() == 1) return SeqView(a.data(), 1, 1, a.shape(0), true);
  if (a.ndim() == 2) return SeqView(a.data(), a.shape(0), 1, a.shape(1), false);
  throw std::invalid_argument(name + " must be (n,) or (T, n), got shape " + shape_of(a));
}

//! A (dim,) C++ vector of points x0, y0, ..., as a (dim / D, D) copy.
template <int D>
RowMatrix as_points(const Eigen::VectorXd& v) {
  return Eigen::Map<const RowMatrix>(v.data(), v.size() / D, D);
}

inline Eigen::MatrixXd matrix(const Array& a, const std::string& name) {
  if (a.ndim() != 2) throw std::invalid_argument(name + " must be a 2-D matrix, got a " + std::to_string(a.ndim()) + "-D array");
  return Eigen::Map<const RowMatrix>(a.data(), a.shape(0), a.shape(1));
}

//! A compressed sparse matrix as the (data, indices, indptr) triple SciPy's
//! csc_matrix / csr_matrix constructors take (CSC for column-major Eigen
//! storage, CSR for row-major).
template <class Sparse>
py::tuple compressed_arrays(const Sparse& K) {
  const auto nnz = K.nonZeros();
  py::array_t<int> indptr(K.outerSize() + 1), indices(nnz);
  py::array_t<double> data(nnz);
  std::copy(K.outerIndexPtr(), K.outerIndexPtr() + K.outerSize() + 1, indptr.mutable_data());
  std::copy(K.innerIndexPtr(), K.innerIndexPtr() + nnz, indices.mutable_data());
  std::copy(K.valuePtr(), K.valuePtr() + nnz, data.mutable_data());
  return py::make_tuple(data, indices, indptr);
}

inline py::array readonly(py::array a) {
  a.attr("flags").attr("writeable") = false;
  return a;
}

//! (T, rows, cols) read-only view of a MatrixSeq owned by `owner`.
inline py::array view(const MatrixSeq& m, py::handle owner) {
  return readonly(py::array_t<double>({m.T(), m.rows(), m.cols()}, m.data(), owner));
}
//! (T, dim) read-only view of a VectorSeq owned by `owner`.
inline py::array view(const VectorSeq& v, py::handle owner) {
  return readonly(py::array_t<double>({v.T(), v.dim()}, v.data(), owner));
}
//! (rows, cols) read-only view of a row-major matrix owned by `owner`.
inline py::array view(const RowMatrix& m, py::handle owner) {
  return readonly(py::array_t<double>({m.rows(), m.cols()}, m.data(), owner));
}
template <class Vec>
inline py::array view_vector(const Vec& v, py::handle owner) {
  return readonly(py::array_t<typename Vec::Scalar>({v.size()}, v.data(), owner));
}

//! A heap object handed to NumPy: the array owns it through a capsule.
template <class T>
py::array owning_array(std::unique_ptr<T> obj, std::vector<py::ssize_t> shape) {
  T* raw = obj.release();
  py::capsule owner(raw, [](void* p) { delete static_cast<T*>(p); });
  return py::array_t<double>(shape, raw->data(), owner);
}

//! `*p` for an object argument that pybind11 hands over as a null pointer
//! when the caller passed None: a TypeError naming the argument instead.
template <class T>
T& deref(const std::shared_ptr<T>& p, const char* name, const char* expected) {
  if (!p) throw py::type_error(std::string(name) + " must be a " + expected + ", got None");
  return *p;
}

//! An object argument taken as py::object (None is refused by the core's
//! rule, ValueError): any other type is a TypeError naming the argument and
//! the type received, not pybind11's nameless cast error.
template <class T>
std::shared_ptr<T> object_arg(const py::object& o, const char* name, const char* expected) {
  if (o.is_none()) throw std::invalid_argument(std::string(name) + " must be a " + expected + ", got None");
  if (!py::isinstance<T>(o))
    throw py::type_error(std::string(name) + " must be a " + expected + ", got " +
                         py::str(py::type::handle_of(o).attr("__name__")).cast<std::string>());
  return o.cast<std::shared_ptr<T>>();
}

//! Serialises the calls that mutate one object (an SPH fluid's state, a
//! full fluid simulation) when Python threads run them at once with the
//! GIL released: a caller waits for the object, never races it. Take it
//! only after the GIL is released (a waiting thread must not hold it).
//! One mutex per object that is in use, created and removed on demand.
class ObjectLock {
 public:
  explicit ObjectLock(const void* object) : object_(object) {
    std::unique_lock<std::mutex> lock(table_mutex());
    auto& busy = table();
    // a thread that already holds this object (a nested call) re-enters
    const auto self = std::this_thread::get_id();
    while (true) {
      auto it = busy.find(object_);
      if (it == busy.end()) {
        busy.emplace(object_, Owner{self, 1});
        return;
      }
      if (it->second.thread == self) {
        ++it->second.depth;
        return;
      }
      released().wait(lock);
    }
  }
  ~ObjectLock() {
    {
      std::lock_guard<std::mutex> lock(table_mutex());
      auto it = table().find(object_);
      if (--it->second.depth > 0) return;
      table().erase(it);
    }
    released().notify_all();
  }
  ObjectLock(const ObjectLock&) = delete;
  ObjectLock& operator=(const ObjectLock&) = delete;

 private:
  struct Owner {
    std::thread::id thread;
    int depth;
  };
  static std::mutex& table_mutex() {
    static std::mutex m;
    return m;
  }
  static std::condition_variable& released() {
    static std::condition_variable c;
    return c;
  }
  static std::unordered_map<const void*, Owner>& table() {
    static std::unordered_map<const void*, Owner> t;
    return t;
  }
  const void* object_;
};

//! A getter's copy of a locked object's state (`copy` returns it by value or
//! by reference; the value is copied): made with the GIL released and the
//! object's lock held, so a read while another thread steps the object sees
//! the state before or after a step, never a mix of two. `copy` must not
//! touch Python; the caller converts the returned value with the GIL.
template <class Copy>
std::decay_t<std::invoke_result_t<Copy&>> read_locked(const void* object, Copy&& copy) {
  py::gil_scoped_release release;
  ObjectLock busy(object);
  return copy();  // the result is built while `busy` and `release` still hold
}

//! Progress bridge: the core calls it (throttled) with the GIL released;
//! it re-acquires the GIL, checks for Ctrl-C and calls the user's callback.
class Progress {
 public:
  explicit Progress(py::object callback) : callback_(std::move(callback)) {
    fn_ = [this](Index done, Index total) -> bool {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        error_ = std::make_unique<py::error_already_set>();
        return false;
      }
      if (!callback_.is_none()) {
        try {
          callback_(done, total);
        } catch (py::error_already_set& e) {
          error_ = std::make_unique<py::error_already_set>(e);
          return false;
        }
      }
      return true;
    };
  }
  const ProgressFn* fn() const { return &fn_; }

  //! A "keep going?" check for loops without a step count (an optimizer's
  //! iterations): at most every 20 ms it asks for Ctrl-C and the callback
  //! (done = total = 0); false stops. Use it inside run().
  std::function<bool()> keep_going() {
    return [this, last = now_seconds()]() mutable {
      if (error_) return false;
      const double t = now_seconds();
      if (t - last < 0.02) return true;
      last = t;
      return fn_(0, 0);
    };
  }

  //! run() for a call that stops early when keep_going() says so: a stop
  //! re-raises the Python error (KeyboardInterrupt, the callback's).
  template <class F>
  auto run_checked(F&& f) -> decltype(f()) {
    try {
      auto result = [&] {
        py::gil_scoped_release release;
        CancelScope scope(&check_);
        return f();
      }();
      if (error_) throw py::error_already_set(*error_);
      return result;
    } catch (const Cancelled&) {
      if (error_) throw py::error_already_set(*error_);
      throw;
    }
  }

  //! Runs f(progress_fn) without the GIL; a cancel re-raises the Python
  //! error. Loops inside one unit of work (cancellation_point()) are
  //! checked too.
  template <class F>
  auto run(F&& f) -> decltype(f(static_cast<const ProgressFn*>(nullptr))) {
    try {
      py::gil_scoped_release release;
      CancelScope scope(&check_);
      return f(&fn_);
    } catch (const Cancelled&) {
      if (error_) throw py::error_already_set(*error_);
      throw;
    }
  }

 private:
  py::object callback_;
  ProgressFn fn_;
  std::unique_ptr<py::error_already_set> error_;
  //! cancellation_point()'s check while run() runs: Ctrl-C only (the
  //! callback is for progress with a count), at most every 20 ms
  std::function<bool()> check_ = [this, last = now_seconds()]() mutable {
    if (error_) return false;
    const double t = now_seconds();
    if (t - last < 0.02) return true;
    last = t;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      error_ = std::make_unique<py::error_already_set>();
      return false;
    }
    return true;
  };
};

}  // namespace directable::py_bind
