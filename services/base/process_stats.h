// What the benchmarks and the memory tests read about their own process, in
// one place: heap and resident memory, CPU time, and the machine's load (the
// figures in docs/BENCHMARKS.md are printed with the load they were taken at).
#pragma once

#include <cstddef>
#include <string>

namespace septa::base {

// Bytes handed out by malloc and not freed, the large blocks it maps on their
// own included (glibc's mallinfo2, after malloc_trim): what a data structure
// costs, without the allocator's slack that the resident size includes.
std::size_t HeapInUse();

// The process' resident set (/proc/self/statm), in bytes.
std::size_t ResidentBytes();

// User plus system CPU time of the whole process so far, in seconds.
double CpuSeconds();

// The 1, 5 and 15 minute load averages as /proc/loadavg prints them.
std::string LoadAverage();

}  // namespace septa::base
