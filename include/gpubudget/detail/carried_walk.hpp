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
               &sim::own_type_tensors, &sim::edge_cache,      &sim::forward_cache,    &sim::shared_inputs, &sim::segment_inputs,
               &sim::output_cache};
static_assert(sizeof(sim) == sizeof(sim_scalars) + std::tuple_size_v<decltype(sim_arrays)> * sizeof(dyn_array<int>),
              "a sim member outside sim_scalars and sim_arrays would not be carried by a split walk");

/// The walker's arrays that change as it walks. Not carried: what its constructor rebuilds (the
/// train_only resolution: named_to_train, train_only_matches, split_repeats) and the per-record
/// statistics, which a split walk does not collect (walker::runs_child_by_child).
inline constexpr auto walker_arrays = std::tuple{&walker::share_ids,      &walker::share_roots, &walker::running_copy, &walker::segment_copies,
                                                 &walker::first_key,      &walker::key_has_grad, &walker::chunk_grads};
// records, count, the sim reference; the carried arrays; the five not carried
static_assert(sizeof(walker) == sizeof(walker_scalars) + 3 * sizeof(void*) + (std::tuple_size_v<decltype(walker_arrays)> + 5) * sizeof(dyn_array<int>),
              "a walker member outside walker_scalars and walker_arrays would not be carried by a split walk");

inline constexpr std::size_t sim_array_count = std::tuple_size_v<decltype(sim_arrays)>;
inline constexpr std::size_t walker_array_count = std::tuple_size_v<decltype(walker_arrays)>;

/// Where array `Member` (a dyn_array member pointer of sim) is in sim_arrays.
template <auto Member, std::size_t I = 0>
constexpr std::size_t sim_array_index() {
  if constexpr (std::is_same_v<decltype(Member), std::remove_cvref_t<decltype(std::get<I>(sim_arrays))>>)
    if (std::get<I>(sim_arrays) == Member) return I;
  if constexpr (I + 1 < sim_array_count) return sim_array_index<Member, I + 1>();
  else return sim_array_count;  // not carried: out of range, an error where it is read
}

/// How many elements each carried array holds.
struct walk_extent {
  std::array<std::size_t, sim_array_count> sim{};
  std::array<std::size_t, walker_array_count> walker{};
};

/// The arrays `Members` of an object in std::arrays of room for `Capacity` elements.
template <const auto& Members, auto Capacity, class = std::make_index_sequence<Capacity.size()>>
struct frozen_arrays;
template <const auto& Members, auto Capacity, std::size_t... I>
struct frozen_arrays<Members, Capacity, std::index_sequence<I...>> {
  template <std::size_t K>
  using element = typename array_member<std::tuple_element_t<K, std::remove_cvref_t<decltype(Members)>>>::element;
  std::tuple<std::array<element<I>, Capacity[I]>...> arrays{};

  /// `o`'s arrays, whose sizes are `sizes` (each within its capacity).
  template <class Owner>
  constexpr void save(const Owner& o, const decltype(Capacity)& sizes) {
    (copy_out(std::get<I>(arrays), o.*std::get<I>(Members), sizes[I]), ...);
  }
  template <class Owner>
  constexpr void restore(Owner& o, const decltype(Capacity)& sizes) const {
    ((o.*std::get<I>(Members)).assign(std::get<I>(arrays).data(), sizes[I]), ...);
  }

 private:
  template <class T, std::size_t N>
  static constexpr void copy_out(std::array<T, N>& to, const dyn_array<T>& from, std::size_t size) {
    copy_elements(to.data(), from.data_, size);
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

/// Does every array of `e` fit within `cap`?
constexpr bool fits_within(const walk_extent& e, const walk_extent& cap) {
  for (std::size_t k = 0; k < sim_array_count; ++k)
    if (e.sim[k] > cap.sim[k]) return false;
  for (std::size_t k = 0; k < walker_array_count; ++k)
    if (e.walker[k] > cap.walker[k]) return false;
  return true;
}

/// Room for the next evaluation's arrays after one that grew them by `growth` to `sizes`: twice
/// that growth again, and a little (the next evaluation usually does what this one did; where it
/// does more, its state says it overflowed and the split walk measures it instead).
constexpr walk_extent room_after(const walk_extent& sizes, const walk_extent& growth) {
  walk_extent room{};
  for (std::size_t k = 0; k < sim_array_count; ++k) room.sim[k] = sizes.sim[k] + 2 * growth.sim[k] + 16;
  for (std::size_t k = 0; k < walker_array_count; ++k) room.walker[k] = sizes.walker[k] + 2 * growth.walker[k] + 16;
  return room;
}

/// Of the arrays' `sizes`, the elements a later evaluation still reads. In backward, node `next`
/// runs next and the nodes after it ran: their records, edges and saved ids are never read again
/// (walker::backward_node reads node n's own; a checkpoint's re-run, the nodes of n's segment),
/// so only the nodes up to `next` are carried, with the edges and saved ids they hold. The arrays
/// keep their sizes: the elements past the carried ones come back value-initialized. Issue I's
/// 5,000-layer chain: Clang 32.6 → 31.2 s, GCC's peak memory 2.13 → 1.98 GB (the dearest
/// evaluation, a forward one, is unchanged).
constexpr walk_extent still_read(const sim& s, const walk_extent& sizes, bool in_backward, std::int32_t next) {
  walk_extent read = sizes;
  if (!in_backward) return read;
  std::int32_t edges_end = 0, saved_end = 0;
  for (std::int32_t n = 0; n <= next; ++n) {  // a node's edges and saves follow it, not always in node order
    const node_record& nd = s.autograd_nodes.data_[n];
    edges_end = nd.inputs > 0 && nd.edges_begin + nd.inputs > edges_end ? nd.edges_begin + nd.inputs : edges_end,
    saved_end = nd.saved_count > 0 && nd.saved_begin + nd.saved_count > saved_end ? nd.saved_begin + nd.saved_count : saved_end;
  }
  read.sim[sim_array_index<&sim::autograd_nodes>()] = static_cast<std::size_t>(next + 1);
  read.sim[sim_array_index<&sim::edges>()] = static_cast<std::size_t>(edges_end);
  read.sim[sim_array_index<&sim::saved_ids>()] = static_cast<std::size_t>(saved_end);
  return read;
}

/// A walk between two evaluations: the simulator and the walker (their arrays in room for
/// `Capacity` elements), how far it grew them since the state before, and where the step stands
/// (`Progress`, the split walk's own). `overflowed`: the arrays did not fit, nothing was saved.
template <walk_extent Capacity, class Progress>
struct carried_walk {
  sim_scalars sim_part{};
  walker_scalars walker_part{};
  frozen_arrays<sim_arrays, Capacity.sim> sim_elements{};
  frozen_arrays<walker_arrays, Capacity.walker> walker_elements{};
  walk_extent sizes{}, growth{};
  bool overflowed = false;
  Progress progress{};

  /// `before`: the sizes the evaluation started from. Of the arrays' elements, only those a later
  /// evaluation reads are copied (still_read, from where `p` stands).
  constexpr void save(const sim& s, const walker& w, const Progress& p, const walk_extent& before) {
    sizes = extent_of(s, w);
    overflowed = !fits_within(sizes, Capacity);
    if (overflowed) return;
    for (std::size_t k = 0; k < sim_array_count; ++k) growth.sim[k] = sizes.sim[k] > before.sim[k] ? sizes.sim[k] - before.sim[k] : 0;
    for (std::size_t k = 0; k < walker_array_count; ++k)
      growth.walker[k] = sizes.walker[k] > before.walker[k] ? sizes.walker[k] - before.walker[k] : 0;
    sim_part = s, walker_part = w;
    const walk_extent read = still_read(s, sizes, p.in_backward, p.next);
    sim_elements.save(s, read.sim), walker_elements.save(w, read.walker);
    progress = p;
  }
  /// Into a simulator and a walker built as the first evaluation built them.
  constexpr void restore(sim& s, walker& w) const {
    restore(s);
    static_cast<walker_scalars&>(w) = walker_part;
    walker_elements.restore(w, sizes.walker);
  }
  constexpr void restore(sim& s) const {
    static_cast<sim_scalars&>(s) = sim_part;
    sim_elements.restore(s, sizes.sim);
  }
};

}  // namespace gpubudget::detail
