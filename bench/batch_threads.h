#pragma once

#include <string>

#include "bench/reference_scene.h"

namespace collide::bench {

/// One row of collide-bench-core's thread table: the reference scene in a Scene, its rays
/// answered through AnswerQueries (scene/scene_query.h) in batches of 4,096, on one thread and
/// split over a WorkerPool of 2, alternating, `runs` times. The row:
/// `batch4096_threads2_over_1  N  one_thread_per_s  two_threads_per_s  ratio  cpus_1  cpus_2`
/// (medians; the ratio is the median of the per-run ratios; cpus_1 and cpus_2 are the process's
/// CPU seconds per wall second on one and on two threads: below 1 and 2, the machine did not give
/// it that many CPUs). Exits the process when the two answers differ.
std::string BatchThreadsRow(const ReferenceScene& scene, int runs);

}  // namespace collide::bench
