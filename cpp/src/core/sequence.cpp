#include "directable/core/sequence.hpp"

#include <sstream>

namespace directable {

void SeqView::check(const std::string& name, Index exp_rows, Index exp_cols, Index horizon) const {
  if (empty()) throw std::invalid_argument(name + " is missing");
  if (rows != exp_rows || cols != exp_cols) {
    std::string got = is_constant() ? shape_str(rows, cols) : shape_str(T, rows, cols);
    throw_shape(name, shape_str(exp_rows, exp_cols) + " or " + shape_str(horizon, exp_rows, exp_cols), got);
  }
  if (!is_constant() && T != horizon) {
    std::ostringstream s;
    s << name << " has " << T << " steps but the horizon is " << horizon << " (expected shape "
      << shape_str(horizon, exp_rows, exp_cols) << ", got " << shape_str(T, rows, cols) << ")";
    throw std::invalid_argument(s.str());
  }
}

void SeqView::check_finite(const std::string& name) const {
  if (!empty()) directable::check_finite(name, data, (is_constant() ? 1 : T) * rows * cols);
}

}  // namespace directable
