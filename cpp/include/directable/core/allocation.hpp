#pragma once
// Sizes that cannot be honoured: a request larger than the machine's
// physical memory fails at once with the size in the message (Python:
// MemoryError), instead of an allocation that the kernel grants lazily and
// a fill that then swaps or stalls for minutes.
#include <new>
#include <string>

namespace directable {

//! std::bad_alloc with a message (pybind11 turns it into MemoryError with that text).
class AllocationTooLarge : public std::bad_alloc {
 public:
  explicit AllocationTooLarge(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

//! Throws AllocationTooLarge naming `what` when `bytes` (a double, so that
//! products of huge counts do not wrap) exceeds the physical memory.
void check_allocation(const std::string& what, double bytes);

}  // namespace directable
