// How blosc2 blocks are spread over the `threads` budget (spec 03 §13):
// items taken in increasing order by up to `threads` workers, each with
// its own per-thread state, with results and errors that never depend on
// the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>

#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs::blosc2_detail {

// Runs produce(k, w) for k = 0..n−1 on up to `threads` threads (each with
// its own worker state `w`), and consume(k, w) strictly in order k = 0, 1,
// … one at a time, on whichever thread produced k; consume returns false
// to stop early. Production overlaps with consumption, so the ordered part
// (appending to the one output vector) runs alongside the parallel part
// (the codecs), and the output never depends on the thread count. The error
// thrown is that of the first failing item in order, so errors do not
// depend on it either. `turn` is the next item to consume, or k_stop.
template <class Worker, typename Produce, typename Consume>
void run_in_order(std::size_t n, std::uint32_t threads, Produce&& produce, Consume&& consume) {
  constexpr std::size_t k_stop = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> turn{0};
  std::exception_ptr error;  // written by the thread holding the turn only
  const std::size_t nworkers = threads <= 1 ? 1 : std::min<std::size_t>(threads, n);
  parallel_for(nworkers, threads, [&](std::size_t) {
    Worker w;
    for (std::size_t k = next.fetch_add(1); k < n && turn.load() != k_stop; k = next.fetch_add(1)) {
      std::exception_ptr e;
      try {
        produce(k, w);
      } catch (...) {
        e = std::current_exception();
      }
      for (std::size_t t = turn.load(); t != k; t = turn.load()) {
        if (t == k_stop) return;  // an earlier item failed or stopped
        turn.wait(t);
      }
      bool go = false;
      if (!e) {
        try {
          go = consume(k, w);
        } catch (...) {
          e = std::current_exception();
        }
      }
      if (e) error = e;
      turn.store(go ? k + 1 : k_stop);
      turn.notify_all();
      if (!go) return;
    }
  });
  if (error) std::rethrow_exception(error);
}

// Runs produce(k, w) for k = 0..n−1 on up to `threads` threads (each with
// its own worker state `w`) when the items are independent. The error
// thrown is that of the first failing item in order: items are taken in
// increasing order and every item before a failed one still runs, so errors
// do not depend on the thread count.
template <class Worker, typename Produce>
void run_unordered(std::size_t n, std::uint32_t threads, Produce&& produce) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failed_at{n};
  std::mutex error_lock;
  std::exception_ptr error;  // of item failed_at
  const std::size_t nworkers = threads <= 1 ? 1 : std::min<std::size_t>(threads, n);
  parallel_for(nworkers, threads, [&](std::size_t) {
    Worker w;
    for (std::size_t k = next.fetch_add(1); k < n && k < failed_at.load(); k = next.fetch_add(1)) {
      try {
        produce(k, w);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(error_lock);
        if (k < failed_at.load()) {
          failed_at.store(k);
          error = std::current_exception();
        }
      }
    }
  });
  if (error) std::rethrow_exception(error);
}
}  // namespace tensogram::codecs::blosc2_detail
