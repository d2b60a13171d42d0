// gpubudget/detail/carried_walk.hpp — the walk's state as a constexpr value: the simulator's and
// the walker's scalars and arrays in plain arrays, so that a walk split over constant evaluations
// (budget_of.hpp) resumes where the evaluation before it stopped.
//
// Constant evaluation allocates only what it frees again: a dyn_array cannot outlive it. So the
// state leaves an evaluation as std::arrays sized by its extent (how many elements each array
// holds, walk_extent), which a first run of the same evaluation measures.
#pragma once
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <gpubudget/base/dyn_array.hpp>
#include <gpubudget/detail/sim.hpp>
#include <gpubudget/detail/walk.hpp>

namespace gpubudget::detail {

template <class Member>
struct array_member;
template <class Owner, class T>
struct array_member<dyn_array<T> Owner::*> {
  using element = T;
};

/// Every array of the simulator, in a fixed order.
inline constexpr auto sim_arrays =
    std::tuple{&sim::storages,        &sim::autograd_nodes,   &sim::saved_ids,        &sim::edges,        &sim::segments,
               &sim::trace,           &sim::temporaries,      &sim::parameter_tensors, &sim::base_weight_tensors,
               &sim::own_type_tensors, &sim::edge_cache,      &sim::forward_cache,    &sim::shared_inputs, &sim::segment_inputs};
static_assert(sizeof(sim) == sizeof(sim_scalars) + std::tuple_size_v<decltype(sim_arrays)> * sizeof(dyn_array<int>),
              "a sim member outside sim_scalars and sim_arrays would not be carried by a split walk");

/// The walker's arrays that change as it walks. Not carried: what its constructor rebuilds (the
/// train_only resolution: named_to_train, train_only_matches, split_repeats) and the per-record
/// statistics, which a split walk does not collect (walker::root_runs_child_by_child).
inline constexpr auto walker_arrays = std::tuple{&walker::share_ids,      &walker::share_roots, &walker::running_copy, &walker::segment_copies,
                                                 &walker::first_key,      &walker::key_has_grad, &walker::chunk_grads};
// records, count, the sim reference; the carried arrays; the five not carried
static_assert(sizeof(walker) == sizeof(walker_scalars) + 3 * sizeof(void*) + (std::tuple_size_v<decltype(walker_arrays)> + 5) * sizeof(dyn_array<int>),
              "a walker member outside walker_scalars and walker_arrays would not be carried by a split walk");

inline constexpr std::size_t sim_array_count = std::tuple_size_v<decltype(sim_arrays)>;
inline constexpr std::size_t walker_array_count = std::tuple_size_v<decltype(walker_arrays)>;

/// How many elements each carried array holds.
struct walk_extent {
  std::array<std::size_t, sim_array_count> sim{};
  std::array<std::size_t, walker_array_count> walker{};
};

/// The arrays `Members` of an object in std::arrays of `Sizes` elements.
template <const auto& Members, auto Sizes, class = std::make_index_sequence<Sizes.size()>>
struct frozen_arrays;
template <const auto& Members, auto Sizes, std::size_t... I>
struct frozen_arrays<Members, Sizes, std::index_sequence<I...>> {
  template <std::size_t K>
  using element = typename array_member<std::tuple_element_t<K, std::remove_cvref_t<decltype(Members)>>>::element;
  std::tuple<std::array<element<I>, Sizes[I]>...> arrays{};

  template <class Owner>
  constexpr void save(const Owner& o) {
    (copy_out(std::get<I>(arrays), o.*std::get<I>(Members)), ...);
  }
  template <class Owner>
  constexpr void restore(Owner& o) const {
    ((o.*std::get<I>(Members)).assign(std::get<I>(arrays).data(), Sizes[I]), ...);
  }

 private:
  template <class T, std::size_t N>
  static constexpr void copy_out(std::array<T, N>& to, const dyn_array<T>& from) {
    T* out = to.data();  // not operator[]: constant evaluation charges a call per element
    for (std::size_t k = 0; k < N; ++k) out[k] = from.data_[k];
  }
};

/// The sizes of `o`'s arrays `Members`.
template <const auto& Members, class Owner, std::size_t... I>
constexpr auto sizes_of(const Owner& o, std::index_sequence<I...>) {
  return std::array<std::size_t, sizeof...(I)>{(o.*std::get<I>(Members)).size_...};
}

constexpr walk_extent extent_of(const sim& s, const walker& w) {
  return walk_extent{sizes_of<sim_arrays>(s, std::make_index_sequence<sim_array_count>{}),
                     sizes_of<walker_arrays>(w, std::make_index_sequence<walker_array_count>{})};
}

/// A walk between two evaluations: the simulator and the walker, and where the step stands
/// (`Progress`, the split walk's own).
template <walk_extent E, class Progress>
struct carried_walk {
  sim_scalars sim_part{};
  walker_scalars walker_part{};
  frozen_arrays<sim_arrays, E.sim> sim_elements{};
  frozen_arrays<walker_arrays, E.walker> walker_elements{};
  Progress progress{};

  constexpr void save(const sim& s, const walker& w, const Progress& p) {
    sim_part = s, walker_part = w;
    sim_elements.save(s), walker_elements.save(w);
    progress = p;
  }
  /// Into a simulator and a walker built as the first evaluation built them.
  constexpr void restore(sim& s, walker& w) const {
    restore(s);
    static_cast<walker_scalars&>(w) = walker_part;
    walker_elements.restore(w);
  }
  constexpr void restore(sim& s) const {
    static_cast<sim_scalars&>(s) = sim_part;
    sim_elements.restore(s);
  }
};

}  // namespace gpubudget::detail
