#include "placement/target_shares.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "placement/fixed_point.h"

namespace strata::placement {

namespace {

// Splits `total` over weights with at most `cap` each.
std::vector<double> water_fill(const std::vector<double> &weights, double total, double cap) {
  std::vector<double> share(weights.size(), 0.0);
  std::vector<bool> capped(weights.size(), false);
  double remaining = total;
  for (;;) {
    double sum = 0;
    for (size_t i = 0; i < weights.size(); ++i)
      if (!capped[i]) sum += weights[i];
    if (sum <= 0 || remaining <= 0) break;
    bool any_capped = false;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (capped[i]) continue;
      share[i] = remaining * weights[i] / sum;
      if (share[i] > cap) {
        share[i] = cap;
        capped[i] = true;
        remaining -= cap;
        any_capped = true;
      }
    }
    if (!any_capped) break;
  }
  return share;
}

class ShareWalker {
 public:
  ShareWalker(const Topology &topo, const Rule &rule, uint32_t num_rep,
              std::map<int32_t, double> &out)
      : topo_(topo), rule_(rule), num_rep_(num_rep), out_(out) {}

  void run() {
    for (size_t si = 0; si < rule_.steps.size(); ++si) {
      const Step &s = rule_.steps[si];
      if (s.op != StepOp::kTake) continue;
      cls_ = s.device_class;
      visit(s.bucket, 1.0, si + 1);
    }
  }

 private:
  // Effective weight of the devices of the rule's class under `item`.
  double weight(int32_t item) const {
    double w = 0;
    for (int32_t d : item >= 0 ? std::vector<int32_t>{item} : topo_.devices_under(item)) {
      const Device *dev = topo_.device(d);
      if (!dev || (!cls_.empty() && dev->device_class != cls_)) continue;
      w += fixed_to_double(dev->weight) * fixed_to_double(dev->effective_reweight());
    }
    return w;
  }

  // Items of `type` with effective weight under bucket `from`.
  std::vector<int32_t> domains(int32_t from, uint32_t type) const {
    std::vector<int32_t> out;
    std::function<void(int32_t)> walk = [&](int32_t b) {
      for (int32_t child : topo_.bucket(b)->items) {
        if (weight(child) <= 0) continue;
        if (topo_.type_of(child) == type)
          out.push_back(child);
        else if (child < 0)
          walk(child);
      }
    };
    walk(from);
    return out;
  }

  // `item` receives `picks` per input and continues at step `si`.
  void visit(int32_t item, double picks, size_t si) {
    if (si >= rule_.steps.size()) return;
    const Step &s = rule_.steps[si];
    if (s.op == StepOp::kEmit || s.op == StepOp::kTake) {
      if (item >= 0) out_[item] += picks;
      return;
    }
    if (item >= 0) return;  // nothing below a device
    int n = s.count > 0 ? s.count : int(num_rep_) + s.count;
    if (n <= 0) return;
    std::vector<int32_t> found = domains(item, s.type);
    std::vector<double> w;
    for (int32_t d : found) w.push_back(weight(d));
    // Each input reaching `item` picks n distinct domains: at most one each.
    std::vector<double> share = water_fill(w, picks * n, picks);
    for (size_t i = 0; i < found.size(); ++i) {
      if (share[i] <= 0) continue;
      if (s.op == StepOp::kChooseleaf && s.type != 0) {
        double dw = w[i];
        for (int32_t dev : topo_.devices_under(found[i])) {
          double devw = weight(dev);
          if (devw > 0) visit(dev, share[i] * devw / dw, si + 1);
        }
      } else {
        visit(found[i], share[i], si + 1);
      }
    }
  }

  const Topology &topo_;
  const Rule &rule_;
  uint32_t num_rep_;
  std::map<int32_t, double> &out_;
  std::string cls_;
};

}  // namespace

std::map<int32_t, double> expected_replicas_per_input(const Topology &topo, const Rule &rule,
                                                      uint32_t num_rep) {
  std::map<int32_t, double> out;
  ShareWalker(topo, rule, num_rep, out).run();
  return out;
}

}  // namespace strata::placement
