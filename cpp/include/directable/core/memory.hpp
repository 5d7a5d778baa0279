#pragma once
// Storage for large schedules (gains and cost-to-go run to 100 MB).
#include <cstddef>
#include <memory>
#include <utility>

namespace directable {

//! Large blocks are 2 MB aligned and, on Linux, advised as transparent huge
//! pages: first touch then costs one fault per 2 MB instead of one per 4 KB
//! (~20 ms per 100 MB). A few freed blocks are kept for reuse by the next
//! request of the same size (solutions re-made call after call then skip
//! the faults).
void* allocate_large(std::size_t bytes);
void free_large(void* p, std::size_t bytes);
constexpr std::size_t kLargeBlock = std::size_t(1) << 21;

//! Allocator that leaves doubles uninitialized on resize, for outputs that
//! are written in full right away (zero-filling 65 MB of gains is ~10% of a
//! sweep); blocks of kLargeBlock and more come from allocate_large.
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) {}
  T* allocate(std::size_t count) {
    if (count * sizeof(T) >= kLargeBlock) return static_cast<T*>(allocate_large(count * sizeof(T)));
    return std::allocator<T>::allocate(count);
  }
  void deallocate(T* p, std::size_t count) {
    if (count * sizeof(T) >= kLargeBlock)
      free_large(p, count * sizeof(T));
    else
      std::allocator<T>::deallocate(p, count);
  }
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace directable
