#include "watch/interest_oracle.h"

#include <algorithm>
#include <tuple>

#include "watch/interest_rules.h"

namespace collide::testing {

std::vector<uint64_t> InterestOracle::Compute(const ObserverSpec& spec,
                                              const std::vector<uint64_t>& before,
                                              const std::vector<BodyState>& bodies) {
  const ObserverRules rules = RulesOf(spec);
  const BodyState* host_state = nullptr;
  if (spec.attached_to.has_value()) {
    for (const BodyState& b : bodies) {
      if (b.id == *spec.attached_to) host_state = &b;
    }
    if (host_state == nullptr) return {};
  }
  Body host;
  if (host_state != nullptr) host.pose = host_state->pose;
  const ObserverFrame frame = FrameOf(spec, rules, host_state != nullptr ? &host : nullptr);
  std::vector<std::tuple<float, uint64_t>> eligible;
  for (const BodyState& b : bodies) {
    if (spec.attached_to.has_value() && b.id == *spec.attached_to) continue;
    if (!Accepts(spec, b.category, b.mask)) continue;
    const float d2 = InterestDistance2(frame.position, b.pose.position);
    const bool member = std::find(before.begin(), before.end(), b.id) != before.end();
    if (!Eligible(rules, frame, b.pose.position, d2, [&] { return member; })) continue;
    eligible.emplace_back(d2, b.id);
  }
  std::sort(eligible.begin(), eligible.end());
  if (eligible.size() > spec.max_relevant) eligible.resize(spec.max_relevant);
  std::vector<uint64_t> out;
  for (const auto& [d2, id] : eligible) out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

void InterestOracle::ApplyChanges(std::span<const InterestSet::Change> changes,
                                  const std::vector<BodyState>& bodies) {
  for (const InterestSet::Change& change : changes) {
    const bool held = specs_.contains(change.id);
    if (held && (change.reset || !change.spec.has_value())) {
      specs_.erase(change.id);
      sets_.erase(change.id);
    }
    if (!change.spec.has_value()) continue;
    std::vector<uint64_t> before = sets_[change.id];  // empty for a new observer
    specs_[change.id] = *change.spec;
    sets_[change.id] = Compute(*change.spec, before, bodies);
  }
}

void InterestOracle::Evaluate(const std::vector<BodyState>& bodies) {
  for (auto& [id, set] : sets_) set = Compute(specs_.at(id), set, bodies);
}

}  // namespace collide::testing
