// gpubudget/base/dyn_array.hpp — a minimal growable array for constant evaluation.
//
// std::vector works in constexpr since C++20, but GCC charges ~300 evaluation steps per
// push_back (allocator_traits layers, checks); this one costs a handful, which keeps a
// 1,600-layer budget under GCC's default -fconstexpr-ops-limit and well under a second.
// Elements must be trivially copyable.
#pragma once
#include <cstddef>
#include <memory>
#include <type_traits>

namespace gpubudget::detail {

/// Copies `n` trivially copyable elements onto `to`'s live elements. Clang evaluates
/// __builtin_memcpy in a constant expression as one step for the whole block (60,000 elements:
/// 0.1 s against 0.9 s as a loop of assignments, a step each), which makes growing an array and
/// carrying a split walk's state between evaluations (detail/carried_walk.hpp) nearly free of
/// steps; GCC 12 cannot evaluate it, and assigns element by element.
template <class T>
constexpr void copy_elements(T* to, const T* from, std::size_t n) {
#if defined(__clang__)
  if (n) __builtin_memcpy(to, from, n * sizeof(T));
#else
  for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
#endif
}

template <class T>
class dyn_array {
  static_assert(std::is_trivially_copyable_v<T>);
  std::size_t cap_ = 0;

  constexpr void grow(std::size_t want) {
    std::size_t cap = cap_ ? cap_ * 2 : 64;
    if (cap < want) cap = want;
    T* fresh = make(cap);
    if constexpr (value_initialized) copy_elements(fresh, data_, size_);
    else for (std::size_t i = 0; i < size_; ++i) std::construct_at(fresh + i, data_[i]);
    release();
    data_ = fresh;
    cap_ = cap;
  }

  // How the elements live. Clang charges a step for each statement and each call: there the
  // elements are value-initialized with the block (one expression) and written by assignment, a
  // statement each without a call (issue I's mixed chain at 1,600 layers through budget_totals_of: 342,577 -> 282,635 steps
  // for the dearest evaluation; distinct_1600's budget 659,687 -> 609,413). GCC charges for
  // value-initializing the whole block (distinct_1600: 3.3 s -> 4.2 s), so there they are
  // constructed one by one in raw storage, as they are added.
#if defined(__clang__)
  static constexpr bool value_initialized = true;
#else
  static constexpr bool value_initialized = false;
#endif
  static constexpr T* make(std::size_t cap) {
    if constexpr (value_initialized) return new T[cap]();
    else return std::allocator<T>{}.allocate(cap);
  }
  constexpr void release() {
    if constexpr (value_initialized) delete[] data_;
    else if (data_) std::allocator<T>{}.deallocate(data_, cap_);
  }

 public:
  /// The elements. Public so that the simulator's hottest paths index them without a call:
  /// constant evaluation charges Clang 2 steps for every call of operator[] (a function body
  /// and its return statement), ~9 % of a budget's steps before they did. Read, and write
  /// elements; only the member functions change how many there are.
  T* data_ = nullptr;
  std::size_t size_ = 0;  ///< how many elements there are (read it; public for the same reason)

  constexpr dyn_array() = default;
  constexpr explicit dyn_array(std::size_t n, const T& v = T{}) { resize(n, v); }
  dyn_array(const dyn_array&) = delete;
  dyn_array& operator=(const dyn_array&) = delete;
  constexpr ~dyn_array() { release(); }

  constexpr void push_back(const T& v) {
    size_ == cap_ ? grow(size_ + 1) : void(),  // one statement: see data_
        value_initialized ? void(data_[size_++] = v) : void(std::construct_at(data_ + size_++, v));
  }
  constexpr void resize(std::size_t n, const T& v = T{}) {
    if (n > cap_) grow(n);
    for (std::size_t i = size_; i < n; ++i) value_initialized ? void(data_[i] = v) : void(std::construct_at(data_ + i, v));
    size_ = n;
  }
  /// Room for `n` elements without growing (growing copies every element, a step each).
  constexpr void reserve(std::size_t n) {
    if (n > cap_) grow(n);
  }
  /// The `n` elements from `first` in place of these (a carried state restored, budget_of.hpp).
  constexpr void assign(const T* first, std::size_t n) {
    size_ = 0;
    reserve(n);
    if constexpr (value_initialized) copy_elements(data_, first, n);
    else for (std::size_t i = 0; i < n; ++i) std::construct_at(data_ + i, first[i]);
    size_ = n;
  }
  constexpr void clear() { size_ = 0; }
  constexpr void pop_back() { --size_; }
  constexpr void swap(dyn_array& o) {
    T* d = data_;
    data_ = o.data_, o.data_ = d;
    std::size_t n = size_;
    size_ = o.size_, o.size_ = n;
    n = cap_;
    cap_ = o.cap_, o.cap_ = n;
  }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](std::size_t i) { return data_[i]; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  constexpr T& back() { return data_[size_ - 1]; }
  constexpr T* begin() { return data_; }
  constexpr T* end() { return data_ + size_; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
};

}  // namespace gpubudget::detail
