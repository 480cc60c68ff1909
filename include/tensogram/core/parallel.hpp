// The threads budget (spec 03 §13): run independent tasks on up to N
// threads. Threads are started per call and joined before returning, so
// there is no pool to configure and no global state; every task of a call
// is at least tens of kilobytes of work, which dwarfs the start-up cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace tensogram {

/// Calls `task(i)` for every i in [0, count), on at most `threads` threads
/// (the caller's thread is one of them; 0 or 1 means sequential). If tasks
/// throw, all tasks still run to completion and the exception of the lowest
/// index is rethrown, so errors do not depend on the thread count.
void parallel_for(std::size_t count, std::uint32_t threads, const std::function<void(std::size_t)>& task);

}  // namespace tensogram
