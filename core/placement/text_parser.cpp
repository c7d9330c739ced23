// The reader for the text form (grammar in text_format.h). Names are
// resolved after the whole text is read, so children may come later; then
// validate_map() checks the result with the line numbers recorded here.
#include <algorithm>
#include <cstdlib>
#include <set>

#include "placement/fixed_point.h"
#include "placement/text_format.h"
#include "placement/text_lexer.h"

namespace strata::placement {

namespace {

// What the first pass records before names can be resolved.
struct PendingBucket {
  Bucket bucket;
  bool has_id = false;
  std::vector<std::string> item_names;
};

struct PendingStep {
  Step step;
  std::string take_name;  // take: the bucket's name
};

struct PendingRule {
  Rule rule;
  bool has_id = false;
  std::vector<PendingStep> steps;
};

struct PendingRemap {
  PgId pg;
  std::string from, to;
  int line;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : lines_(lex_text(text)) {}

  Result<PlacementMap> run(SourceLines *out_lines) {
    if (Status s = read_all(); !s.ok()) return s;
    if (Status s = resolve(); !s.ok()) return s;
    if (Status s = validate_map(map_, &src_); !s.ok()) return s;
    if (out_lines) *out_lines = std::move(src_);
    return std::move(map_);
  }

 private:
  static Status error(int line, const std::string &msg) {
    return Status::Error(EINVAL, "line " + std::to_string(line) + ": " + msg);
  }

  static bool parse_int(const std::string &s, long long lo, long long hi, long long *out) {
    if (s.empty()) return false;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
  }

  Status read_all() {
    for (i_ = 0; i_ < lines_.size(); ++i_) {
      const TextLine &l = lines_[i_];
      const std::string &kw = l.tokens[0];
      Status s;
      if (kw == "tunable")
        s = read_tunable(l);
      else if (kw == "type")
        s = read_type(l);
      else if (kw == "device")
        s = read_device(l);
      else if (kw == "rule")
        s = read_rule();
      else if (kw == "exception")
        s = read_exception(l);
      else if (map_.type_by_name(kw) && map_.type_by_name(kw)->id != 0)
        s = read_bucket();
      else if (kw == "}" || kw == "{")
        s = error(l.number, "unexpected '" + kw + "'");
      else
        s = error(l.number, "unknown keyword or bucket type '" + kw +
                                "' (bucket types must be declared with 'type' first)");
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  Status read_tunable(const TextLine &l) {
    long long v = 0;
    if (l.tokens.size() != 3) return error(l.number, "expected 'tunable <name> <value>'");
    if (l.tokens[1] != "choose_total_tries")
      return error(l.number, "unknown tunable '" + l.tokens[1] + "'");
    if (!parse_int(l.tokens[2], 1, 1000, &v))
      return error(l.number, "choose_total_tries must be an integer in 1..1000, not '" +
                                 l.tokens[2] + "'");
    map_.tunables.choose_total_tries = uint32_t(v);
    return Status::OK();
  }

  Status read_type(const TextLine &l) {
    long long id = 0;
    if (l.tokens.size() != 3) return error(l.number, "expected 'type <id> <name>'");
    if (!parse_int(l.tokens[1], 0, 65535, &id))
      return error(l.number, "type id must be an integer in 0..65535, not '" + l.tokens[1] + "'");
    if (is_keyword(l.tokens[2]) && !(id == 0 && l.tokens[2] == "device"))
      return error(l.number, "'" + l.tokens[2] + "' is a keyword and cannot name a type");
    if (map_.type_by_name(l.tokens[2]))
      return error(l.number, "duplicate type name '" + l.tokens[2] + "'");
    map_.types.push_back({uint32_t(id), l.tokens[2]});
    src_.types.push_back(l.number);
    return Status::OK();
  }

  static bool is_keyword(const std::string &s) {
    static const std::set<std::string> kw{"tunable", "type", "device", "rule", "exception"};
    return kw.count(s) > 0;
  }

  Status read_weight(const TextLine &l, size_t at, const std::string &what,
                     const std::string &owner, Weight *out) {
    if (at >= l.tokens.size()) return error(l.number, what + " needs a value");
    const std::string &v = l.tokens[at];
    if (!v.empty() && v[0] == '-')
      return error(l.number, "negative " + what + " '" + v + "' for " + owner);
    if (!parse_fixed(v, out))
      return error(l.number, "bad " + what + " '" + v + "' for " + owner +
                                 " (a decimal number up to 65535)");
    return Status::OK();
  }

  Status read_device(const TextLine &l) {
    long long id = 0;
    if (l.tokens.size() < 3) return error(l.number, "expected 'device <id> <name> [weight W] ...'");
    if (!parse_int(l.tokens[1], 0, INT32_MAX, &id))
      return error(l.number, "device id must be an integer >= 0, not '" + l.tokens[1] + "'");
    Device d;
    d.id = int32_t(id);
    d.name = l.tokens[2];
    std::string owner = "device '" + d.name + "'";
    for (size_t k = 3; k < l.tokens.size(); ++k) {
      const std::string &t = l.tokens[k];
      if (t == "weight") {
        if (Status s = read_weight(l, ++k, "weight", owner, &d.weight); !s.ok()) return s;
      } else if (t == "reweight") {
        if (Status s = read_weight(l, ++k, "reweight", owner, &d.reweight); !s.ok()) return s;
        if (d.reweight > kWeightOne)
          return error(l.number, "reweight of " + owner + " must be between 0 and 1");
      } else if (t == "class") {
        if (++k >= l.tokens.size()) return error(l.number, "class needs a name");
        d.device_class = l.tokens[k];
      } else if (t == "out") {
        d.out = true;
      } else {
        return error(l.number, "unknown device attribute '" + t + "'");
      }
    }
    map_.devices.push_back(std::move(d));
    src_.devices.push_back(l.number);
    return Status::OK();
  }

  // Reads "<word> <name> [id N] {" and returns the id; *has_id tells whether
  // one was given.
  Status read_block_header(const TextLine &l, long long lo, long long hi, long long *id,
                           bool *has_id) {
    const auto &t = l.tokens;
    *has_id = false;
    size_t k = 2;
    if (t.size() < 3) return error(l.number, "expected '" + t[0] + " <name> [id N] {'");
    if (t[1] == "{") return error(l.number, "'" + t[0] + "' needs a name before '{'");
    if (k < t.size() && t[k] == "id") {
      if (k + 1 >= t.size() || !parse_int(t[k + 1], lo, hi, id))
        return error(l.number, "id must be an integer in " + std::to_string(lo) + ".." +
                                   std::to_string(hi) + (k + 1 < t.size() ? ", not '" + t[k + 1] + "'" : ""));
      *has_id = true;
      k += 2;
    }
    if (k >= t.size() || t[k] != "{" || k + 1 != t.size())
      return error(l.number, "expected '{' at the end of the line");
    return Status::OK();
  }

  Status read_bucket() {
    const TextLine &head = lines_[i_];
    PendingBucket pb;
    long long id = 0;
    if (Status s = read_block_header(head, INT32_MIN, -1, &id, &pb.has_id); !s.ok()) return s;
    pb.bucket.id = int32_t(id);
    pb.bucket.name = head.tokens[1];
    pb.bucket.type = map_.type_by_name(head.tokens[0])->id;
    src_.buckets.push_back(head.number);
    src_.bucket_items.emplace_back();
    for (++i_; i_ < lines_.size(); ++i_) {
      const TextLine &l = lines_[i_];
      if (l.tokens[0] == "}") {
        if (l.tokens.size() != 1) return error(l.number, "unexpected text after '}'");
        buckets_.push_back(std::move(pb));
        return Status::OK();
      }
      if (l.tokens.size() != 1 || l.tokens[0] == "{")
        return error(l.number, "expected one child name per line in bucket '" +
                                   pb.bucket.name + "', or '}'");
      pb.item_names.push_back(l.tokens[0]);
      src_.bucket_items.back().push_back(l.number);
    }
    return error(head.number, "bucket '" + pb.bucket.name + "' is not closed with '}'");
  }

  Status read_rule() {
    const TextLine &head = lines_[i_];
    PendingRule pr;
    long long id = 0;
    if (Status s = read_block_header(head, 0, INT32_MAX, &id, &pr.has_id); !s.ok()) return s;
    pr.rule.id = uint32_t(id);
    pr.rule.name = head.tokens[1];
    src_.rules.push_back(head.number);
    src_.rule_steps.emplace_back();
    for (++i_; i_ < lines_.size(); ++i_) {
      const TextLine &l = lines_[i_];
      const auto &t = l.tokens;
      if (t[0] == "}") {
        if (t.size() != 1) return error(l.number, "unexpected text after '}'");
        rules_.push_back(std::move(pr));
        return Status::OK();
      }
      PendingStep ps;
      if (t[0] == "take") {
        ps.step.op = StepOp::kTake;
        if (t.size() == 2) {
          ps.take_name = t[1];
        } else if (t.size() == 4 && t[2] == "class") {
          ps.take_name = t[1];
          ps.step.device_class = t[3];
        } else {
          return error(l.number, "expected 'take <bucket> [class <class>]'");
        }
      } else if (t[0] == "choose" || t[0] == "chooseleaf") {
        ps.step.op = t[0] == "choose" ? StepOp::kChoose : StepOp::kChooseleaf;
        long long n = 0;
        if (t.size() != 5 || t[3] != "type")
          return error(l.number, "expected '" + t[0] + " firstn <n> type <type>'");
        if (t[1] != "firstn")
          return error(l.number, "unsupported choose mode '" + t[1] + "' (only firstn)");
        if (!parse_int(t[2], -STRATA_PLACEMENT_MAX_RESULT, STRATA_PLACEMENT_MAX_RESULT, &n))
          return error(l.number, "bad count '" + t[2] + "'");
        const TypeDef *type = map_.type_by_name(t[4]);
        if (!type) return error(l.number, "unknown type '" + t[4] + "'");
        ps.step.count = int32_t(n);
        ps.step.type = type->id;
      } else if (t[0] == "emit") {
        if (t.size() != 1) return error(l.number, "unexpected text after 'emit'");
        ps.step.op = StepOp::kEmit;
      } else {
        return error(l.number, "unknown rule step '" + t[0] +
                                   "' (take, choose, chooseleaf, emit)");
      }
      pr.steps.push_back(std::move(ps));
      src_.rule_steps.back().push_back(l.number);
    }
    return error(head.number, "rule '" + pr.rule.name + "' is not closed with '}'");
  }

  Status read_exception(const TextLine &l) {
    const auto &t = l.tokens;
    PendingRemap r;
    if (t.size() != 5 || t[3] != "->")
      return error(l.number, "expected 'exception <pool>.<pg> <device> -> <device>'");
    if (!parse_pg(t[1], &r.pg))
      return error(l.number, "bad PG id '" + t[1] + "' (expected <pool>.<hex seed>, e.g. 1.2f)");
    r.from = t[2];
    r.to = t[4];
    r.line = l.number;
    remaps_.push_back(std::move(r));
    return Status::OK();
  }

  // Second pass: ids for buckets and rules that have none, then names.
  Status resolve() {
    std::set<int32_t> used_bucket_ids;
    for (const auto &pb : buckets_)
      if (pb.has_id) used_bucket_ids.insert(pb.bucket.id);
    int32_t next_id = -1;
    for (auto &pb : buckets_) {
      if (pb.has_id) continue;
      while (used_bucket_ids.count(next_id)) --next_id;
      pb.bucket.id = next_id--;
    }
    for (const auto &pb : buckets_) map_.buckets.push_back(pb.bucket);

    for (size_t b = 0; b < buckets_.size(); ++b) {
      for (size_t j = 0; j < buckets_[b].item_names.size(); ++j) {
        const std::string &name = buckets_[b].item_names[j];
        int32_t id = 0;
        if (!map_.item_by_name(name, &id))
          return error(src_.bucket_items[b][j], "unknown bucket or device '" + name +
                                                    "' in bucket '" + buckets_[b].bucket.name + "'");
        map_.buckets[b].items.push_back(id);
      }
    }

    std::set<uint32_t> used_rule_ids;
    for (const auto &pr : rules_)
      if (pr.has_id) used_rule_ids.insert(pr.rule.id);
    uint32_t next_rule = 0;
    for (size_t r = 0; r < rules_.size(); ++r) {
      PendingRule &pr = rules_[r];
      if (!pr.has_id) {
        while (used_rule_ids.count(next_rule)) ++next_rule;
        pr.rule.id = next_rule++;
      }
      for (size_t s = 0; s < pr.steps.size(); ++s) {
        Step step = pr.steps[s].step;
        if (step.op == StepOp::kTake) {
          int32_t id = 0;
          const std::string &name = pr.steps[s].take_name;
          if (!map_.item_by_name(name, &id))
            return error(src_.rule_steps[r][s], "unknown bucket '" + name + "' in rule '" +
                                                    pr.rule.name + "'");
          if (id >= 0)
            return error(src_.rule_steps[r][s],
                         "take needs a bucket, '" + name + "' is a device");
          step.bucket = id;
        }
        pr.rule.steps.push_back(std::move(step));
      }
      map_.rules.push_back(pr.rule);
    }

    for (const PendingRemap &r : remaps_) {
      Remap m;
      for (auto [name, id] : {std::pair{&r.from, &m.from}, std::pair{&r.to, &m.to}}) {
        if (!map_.item_by_name(*name, id) || *id < 0)
          return error(r.line, "unknown device '" + *name + "' in exception " + format_pg(r.pg));
      }
      map_.exceptions[r.pg].push_back(m);
      src_.exceptions[r.pg].push_back(r.line);
    }
    return Status::OK();
  }

  std::vector<TextLine> lines_;
  size_t i_ = 0;
  PlacementMap map_;
  SourceLines src_;
  std::vector<PendingBucket> buckets_;
  std::vector<PendingRule> rules_;
  std::vector<PendingRemap> remaps_;
};

}  // namespace

Result<PlacementMap> parse_text(std::string_view text, SourceLines *lines) {
  return Parser(text).run(lines);
}

}  // namespace strata::placement
