#pragma once
/// A vector of trivially copyable values that keeps its first N elements
/// inside the object and moves to the heap only past them.
///
/// Note [Inline lists]
/// Every recorded call fills a few short lists: the op's inputs and
/// outputs, one consumer entry per input, a storage's tensors. With
/// std::vector (or a pool-backed pmr vector, as before) each list is a heap
/// block, and allocating and freeing those blocks was a third of a
/// simulation's time on the paper's traces (perf, docs/benchmarks.md). Nearly
/// all of these lists are short, so they live inline; a longer list moves
/// to the heap and, like std::vector, keeps its capacity when cleared, so a
/// recycled graph record does not allocate again (Note [Graph arena]).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>

namespace dtr {

template <typename T, std::uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "values are memcpy'd");
  static_assert(N >= 1, "at least one inline element");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<T*>;
  using const_reverse_iterator = std::reverse_iterator<const T*>;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
  }
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return capacity_; }
  T* data() { return on_heap() ? heap_ : inline_; }
  const T* data() const { return on_heap() ? heap_ : inline_; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const {
    return const_reverse_iterator(end());
  }
  const_reverse_iterator rend() const {
    return const_reverse_iterator(begin());
  }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void push_back(T value) {
    if (size_ == capacity_) grow(size_ + 1);
    data()[size_++] = value;
  }
  void pop_back() { --size_; }
  /// Keeps the capacity (heap block included).
  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  template <typename It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<std::uint32_t>(n);
  }
  /// Removes [first, last), keeping the order of the rest.
  T* erase(const T* first, const T* last) {
    T* f = begin() + (first - begin());
    T* rest = std::copy(begin() + (last - begin()), end(), f);
    size_ = static_cast<std::uint32_t>(rest - begin());
    return f;
  }
  T* erase(const T* pos) { return erase(pos, pos + 1); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return capacity_ > N; }
  void grow(std::size_t at_least) {
    std::size_t cap =
        std::max<std::size_t>(at_least, 2 * std::size_t{capacity_});
    T* block = static_cast<T*>(::operator new(cap * sizeof(T)));
    if (size_ != 0) std::memcpy(block, data(), size_ * sizeof(T));
    release();
    heap_ = block;
    capacity_ = static_cast<std::uint32_t>(cap);
  }
  void release() {
    if (on_heap()) ::operator delete(heap_);
    capacity_ = N;
  }
  // Leaves `other` empty and inline (its heap block, if any, is ours now).
  void take(SmallVector& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.on_heap()) {
      heap_ = other.heap_;
    } else if (size_ != 0) {
      std::memcpy(inline_, other.inline_, size_ * sizeof(T));
    }
    other.size_ = 0;
    other.capacity_ = N;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;  // > N: the elements are in heap_
  union {
    T inline_[N];
    T* heap_;
  };
};

}  // namespace dtr
